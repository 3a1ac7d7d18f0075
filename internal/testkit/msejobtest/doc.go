// Package msejobtest holds the check model of a toy deployment, fitted
// as `genlens mse fit` fits one, for the tests of the monitors (package
// monitorsvc and the service's monitor pages).
package msejobtest
