// Package cluster implements agglomerative hierarchical clustering of n
// items from their pairwise distances, and the cuts of the resulting tree
// into flat clusters.
//
// It exists because genlens groups the pixels of an image into nearly
// independent clusters (Gruber, Ziegler & Buettner, 2024, Algorithm 1), and no maintained Go
// library for hierarchical clustering installs here; the authors use
// scipy.cluster.hierarchy (linkage(pdist(C), 'average') followed by
// fcluster(..., 'maxclust', k)), and this package follows scipy's
// conventions so that results can be compared:
//
//   - Linkages: Average (UPGMA, the default), Complete, Single and Ward,
//     all through the Lance–Williams update of the distance matrix. Ward's
//     heights are scipy's: the Euclidean distance scaled so that merging
//     two singletons at distance d happens at height d, which is only
//     meaningful when the input distances are Euclidean.
//   - The tree is a list of n-1 merges in increasing height. Merge i joins
//     clusters A and B into cluster n+i; leaves are 0..n-1, as in the rows
//     of scipy's linkage matrix.
//
// Agglomerate runs the nearest-neighbour chain algorithm (Murtagh 1983;
// Müllner 2011, "Modern hierarchical, agglomerative clustering
// algorithms", arXiv:1109.2378), which is exact for these four linkages
// because they are reducible: O(n²) time and one n×n working matrix, so
// 4096 items cluster in about 0.3 s.
//
// Cutting into k clusters applies the n-k lowest merges, which gives
// exactly k clusters; scipy's fcluster(maxclust) cuts at a height instead
// and can return fewer than k clusters when merges tie at the cut.
// Cluster labels are 0-based and ordered by cluster size, largest first
// (ties by smallest member index), so that label 0 is always the biggest
// region whatever order the merges came in.
//
// The package does no I/O.
package cluster
