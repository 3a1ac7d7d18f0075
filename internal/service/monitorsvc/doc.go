// Package monitorsvc is the service of monitors: a deployed regression
// model watched with the check model of "A One-Step MSE Estimation of
// Models in Production" (anonymous, under review, 2024), as `genlens mse
// estimate` does for a file, but fed row batch by row batch. Each row's
// estimate 2 (h(x) - f(x))² is computed once at ingest and stored;
// chunks, bands, thresholds and alerts come from package monitor at read
// time (Service.Chunks), so a label arriving late changes nothing but the
// realised MSE.
//
// The records (records.Monitor, Row, Label, Series) are kept by a Store
// (package store's DB on SQLite or Postgres); package server speaks HTTP
// in front of the Service, whose Store methods it calls through it.
package monitorsvc
