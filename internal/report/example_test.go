package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/internal/report"
)

func ExampleReport_Write() {
	dir, err := os.MkdirTemp("", "report-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	r := report.Report{
		Title: "Kernel entropy of model X",
		Sections: []report.Section{{
			Title: "Summary",
			Text:  []string{"Kernel entropy separates correct from incorrect answers."},
			Tables: []report.Table{{
				Header: []string{"group", "n", "mean entropy"},
				Rows: [][]string{
					{"correct", "812", "0.41"},
					{"incorrect", "188", "1.37"},
				},
			}},
			// Typically written with chart.Histograms into dir first.
			Images: []report.Image{{File: "entropy.png", Caption: "Kernel entropy by correctness"}},
		}},
	}
	if err := r.Write(dir); err != nil {
		log.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(md))

	// Output:
	// # Kernel entropy of model X
	//
	// ## Summary
	//
	// Kernel entropy separates correct from incorrect answers.
	//
	// | group | n | mean entropy |
	// | --- | ---: | ---: |
	// | correct | 812 | 0.41 |
	// | incorrect | 188 | 1.37 |
	//
	// ![Kernel entropy by correctness](entropy.png)
	//
	// *Kernel entropy by correctness*
	//
}
