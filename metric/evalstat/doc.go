// Package evalstat provides the statistics genlens uses to evaluate
// uncertainty scores: AUROC for binary correctness, Pearson and Spearman
// correlation for continuous losses, numpy-compatible summaries (Mean, Std,
// Quantile), and the RougeL-F measure that defines correctness of a free-text
// answer together with the lexical-similarity baseline built on it.
//
// Conventions follow the reference implementations that published numbers
// were computed with, so that results can be compared directly: AUROC
// handles ties as scikit-learn's roc_auc_score, Ranks as scipy's rankdata
// with method "average", Spearman as scipy.stats.spearmanr, Quantile as
// numpy's default "linear" method, Std as numpy.std with ddof, and
// Wilcoxon as scipy.stats.wilcoxon (two-sided; exact null distribution for
// small samples without ties, normal approximation otherwise).
package evalstat
