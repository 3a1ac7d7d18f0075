package jobrun_test

import (
	"testing"

	"github.com/genlens/genlens/internal/service/jobrun"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/store/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) records.Store { return jobrun.NewMemStore() })
}
