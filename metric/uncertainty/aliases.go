package uncertainty

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genlens/genlens/internal/suggest"
)

// Alias is another tool's name for a score of the table. An alias is not
// taken as the score: it is answered with a suggestion of the score
// ("did you mean se?"), because the other tool's estimator differs in
// details its numbers depend on (LM-Polygraph's graph scores build their
// similarity from an NLI model by default, and its lexical similarity is
// negated), so the user chooses knowingly.
type Alias struct {
	Name   string // as the other tool spells it: "SemanticEntropy"
	Score  string // the Def.Name it corresponds to: "se"
	Source string // the tool: "LM-Polygraph"
}

// lmPolygraph is the source of the estimator class names below
// (lm_polygraph.estimators: github.com/IINemo/lm-polygraph).
const lmPolygraph = "LM-Polygraph"

var aliases = []Alias{
	{"SemanticEntropy", "se", lmPolygraph},
	{"MaximumSequenceProbability", "msp", lmPolygraph},
	{"Perplexity", "perplexity", lmPolygraph},
	{"MeanTokenEntropy", "mte", lmPolygraph},
	{"PTrue", "ptrue", lmPolygraph},
	{"LexicalSimilarity", "lexsim", lmPolygraph},
	{"EigValLaplacian", "eigv", lmPolygraph},
	{"DegMat", "degree", lmPolygraph},
	{"Eccentricity", "ecc", lmPolygraph},
	{"NumSemSets", "numsets", lmPolygraph},
	{"KernelLanguageEntropy", "kle", lmPolygraph},
	{"MonteCarloSequenceEntropy", "pe", lmPolygraph},
	{"MonteCarloNormalizedSequenceEntropy", "ne", lmPolygraph},
}

// Aliases returns the other tools' names of the scores.
func Aliases() []Alias { return slices.Clone(aliases) }

// Suggest returns the names of the table that typed, which names no
// score, likely means, nearest first, and for an alias of another tool
// which one ("LM-Polygraph's SemanticEntropy"). Names compare folded
// (suggest.Fold): "semantic_entropy", "SemanticEntropy" and
// "semantic-entropy" are the same; so are a score's name and its JSON key
// ("kernel_entropy" is kernel-entropy). Otherwise the names and aliases
// at most two edits away are suggested. Only the names in among are
// suggested (all of the table's when among is nil).
func Suggest(typed string, among []string) (names []string, alias string) {
	ok := func(name string) bool { return among == nil || slices.Contains(among, name) }
	f := suggest.Fold(typed)
	for _, d := range defs {
		if ok(d.Name) && (suggest.Fold(d.Name) == f || suggest.Fold(d.Key) == f) && d.Name != typed {
			return []string{d.Name}, ""
		}
	}
	for _, a := range aliases {
		if ok(a.Score) && suggest.Fold(a.Name) == f {
			return []string{a.Score}, a.Source + "'s " + a.Name
		}
	}
	folded := map[string]string{} // folded name or alias → the score's name
	var keys []string
	for _, d := range defs {
		if ok(d.Name) {
			folded[suggest.Fold(d.Name)] = d.Name
			keys = append(keys, suggest.Fold(d.Name))
		}
	}
	for _, a := range aliases {
		if k := suggest.Fold(a.Name); ok(a.Score) && folded[k] == "" {
			folded[k] = a.Score
			keys = append(keys, k)
		}
	}
	// Typos only: two edits at most. (Containment, which suggest.Among
	// also counts, would answer "entropy" with every entropy.)
	for _, k := range suggest.Among(f, keys) {
		if n := folded[k]; suggest.Distance(f, k) <= 2 && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, ""
}

// DidYouMean is the clause an unknown score's error adds: "; did you
// mean se (LM-Polygraph's SemanticEntropy)?", "; did you mean one of
// kle, ecc?", or "" when no name is close (see Suggest).
func DidYouMean(typed string, among []string) string {
	names, alias := Suggest(typed, among)
	switch {
	case len(names) == 0:
		return ""
	case alias != "":
		return fmt.Sprintf("; did you mean %s (%s)?", names[0], alias)
	case len(names) == 1:
		return fmt.Sprintf("; did you mean %s?", names[0])
	}
	return fmt.Sprintf("; did you mean one of %s?", strings.Join(names, ", "))
}
