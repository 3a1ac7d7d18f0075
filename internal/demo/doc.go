// Package demo is the guided tour of genlens: every method run on
// synthetic data with known structure, generated in code, so that a new
// user sees each one work (and what its output means) before bringing
// data of their own.
//
// Sections returns the tour as an explicit, ordered list; Run runs it,
// prints a short summary of each section and writes a report (index.html
// and report.md with PNG charts). Every section draws from one generator
// seeded by Options.Seed, so the same seed gives the same report.
package demo
