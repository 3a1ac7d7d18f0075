package jobrun_test

import (
	"testing"

	"genlens/jobrun"
	"genlens/records/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) jobrun.Store { return jobrun.NewMemStore() })
}
