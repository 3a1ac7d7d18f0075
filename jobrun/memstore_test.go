package jobrun_test

import (
	"testing"

	"github.com/genlens/genlens/jobrun"
	"github.com/genlens/genlens/records/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) jobrun.Store { return jobrun.NewMemStore() })
}
