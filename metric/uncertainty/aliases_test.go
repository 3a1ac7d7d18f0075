package uncertainty

import (
	"slices"
	"testing"
)

// Every alias names a score of the table, once.
func TestAliasesNameScores(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Aliases() {
		if _, ok := Lookup(a.Score); !ok {
			t.Errorf("alias %s names %q, not a score of the table", a.Name, a.Score)
		}
		if seen[a.Name] {
			t.Errorf("alias %s twice", a.Name)
		}
		seen[a.Name] = true
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		typed string
		among []string
		want  []string
		alias string
	}{
		{"SemanticEntropy", nil, []string{"se"}, "LM-Polygraph's SemanticEntropy"},
		{"semantic_entropy", nil, []string{"se"}, "LM-Polygraph's SemanticEntropy"},
		{"semantic-entropy", nil, []string{"se"}, "LM-Polygraph's SemanticEntropy"},
		{"MaximumSequenceProbability", nil, []string{"msp"}, "LM-Polygraph's MaximumSequenceProbability"},
		{"mean_token_entropy", nil, []string{"mte"}, "LM-Polygraph's MeanTokenEntropy"},
		{"p_true", nil, []string{"ptrue"}, ""}, // the name itself, with an underscore
		{"EigValLaplacian", nil, []string{"eigv"}, "LM-Polygraph's EigValLaplacian"},
		{"deg_mat", nil, []string{"degree"}, "LM-Polygraph's DegMat"},
		{"Eccentricity", nil, []string{"ecc"}, "LM-Polygraph's Eccentricity"},
		{"num_sem_sets", nil, []string{"numsets"}, "LM-Polygraph's NumSemSets"},
		{"KernelLanguageEntropy", nil, []string{"kle"}, "LM-Polygraph's KernelLanguageEntropy"},
		{"MonteCarloSequenceEntropy", nil, []string{"pe"}, "LM-Polygraph's MonteCarloSequenceEntropy"},
		{"monte_carlo_normalized_sequence_entropy", nil, []string{"ne"}, "LM-Polygraph's MonteCarloNormalizedSequenceEntropy"},
		{"LexicalSimilarity", nil, []string{"lexsim"}, ""}, // lexsim's JSON key, lexical_similarity
		// A score's JSON key, or its name with underscores.
		{"kernel_entropy", nil, []string{"kernel-entropy"}, ""},
		{"se_discrete", nil, []string{"se-discrete"}, ""},
		// Typos of names and of aliases.
		{"lexsm", nil, []string{"lexsim"}, ""},
		{"kernel-entrpy", nil, []string{"kernel-entropy"}, ""},
		{"SemanticEntropi", nil, []string{"se"}, ""},
		{"zzzzzzzz", nil, nil, ""},
		// Only what among offers: a proxy without ptrue suggests none.
		{"PTrue", []string{"kernel-entropy", "lexsim"}, nil, ""},
	} {
		got, alias := Suggest(c.typed, c.among)
		if !slices.Equal(got, c.want) || alias != c.alias {
			t.Errorf("Suggest(%q) = %q, %q; want %q, %q", c.typed, got, alias, c.want, c.alias)
		}
	}
	if got := DidYouMean("semantic_entropy", nil); got != "; did you mean se (LM-Polygraph's SemanticEntropy)?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("zzzzzzzz", nil); got != "" {
		t.Errorf("DidYouMean = %q, want nothing", got)
	}
}
