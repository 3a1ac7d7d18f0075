package evalstat_test

import (
	"fmt"

	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/metric/evalstat"
)

// An uncertainty score is evaluated by how well it ranks incorrect answers
// above correct ones: AUROC with "incorrect" as the positive class.
func ExampleAUROC() {
	uncertainty := []float64{0.1, 0.4, 0.35, 0.8}
	incorrect := []bool{false, false, true, true}
	auc, err := evalstat.AUROC(uncertainty, incorrect)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.2f\n", auc)
	// Output:
	// 0.75
}

func ExampleQuantile() {
	x := []float64{1, 2, 3, 4}
	fmt.Println(evalstat.Quantile(x, 0.25), evalstat.Quantile(x, 0.5), evalstat.Quantile(x, 1))
	// Output:
	// 1.75 2.5 4
}

// An answer counts as correct when its RougeL-F against the reference
// exceeds 0.3.
func ExampleRougeLFText() {
	f := evalstat.RougeLFText("The cat sat on the mat.", "the cat on the mat")
	fmt.Printf("%.4f correct=%t\n", f, f > 0.3)
	// Output:
	// 0.9091 correct=true
}

func ExampleLexicalSimilarity() {
	answers := []string{"Paris", "Paris, France", "It is Paris."}
	samples := make([][]string, len(answers))
	for i, a := range answers {
		samples[i] = tokenize.Words(a)
	}
	// Pairs: 2*1/(1+2) = 2/3, 2*1/(1+3) = 1/2, 2*1/(2+3) = 2/5; mean 47/90.
	fmt.Printf("%.4f\n", evalstat.LexicalSimilarity(samples))
	// Output:
	// 0.5222
}
