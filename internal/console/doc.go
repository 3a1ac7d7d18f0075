// Package console is the terminal of one run of the command line: its
// stdout and stderr, which share progress bars without a bar being glued
// to the next line of text (New), names a user gave printed with their
// control characters escaped (Escape), and the bars a run draws on a
// terminal and nowhere else: one per stage of a job with an images/s
// rate (Stages), one of steps with the rate of a metered quantity
// (Meter), and one of the bytes of a download (Download).
package console
