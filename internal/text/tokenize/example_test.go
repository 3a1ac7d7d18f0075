package tokenize_test

import (
	"fmt"

	"github.com/genlens/genlens/internal/text/tokenize"
)

func ExampleWords() {
	fmt.Printf("%q\n", tokenize.Words("Botswana, South-Africa!"))
	fmt.Printf("%q\n", tokenize.Words("I don't know."))
	// Output:
	// ["botswana" "south" "africa"]
	// ["i" "don" "t" "know"]
}
