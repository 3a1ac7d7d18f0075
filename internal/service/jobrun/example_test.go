package jobrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/genlens/genlens/internal/service/jobrun"
)

// A service runs jobs from uploads: upload the inputs, submit a request
// that names them by id, and poll the job until it ends. Its result is
// the JSON that `genlens cka --json` prints.
func Example() {
	dir, _ := os.MkdirTemp("", "genlens-example-")
	defer os.RemoveAll(dir)
	svc, err := jobrun.New(jobrun.Config{Store: jobrun.NewMemStore(), DataDir: dir, Poll: 10 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	x, _ := svc.SaveUpload(ctx, "x.csv", strings.NewReader("1,2\n2,1\n3,5\n4,4\n5,0\n"))
	y, _ := svc.SaveUpload(ctx, "y.csv", strings.NewReader("1\n3\n2\n5\n4\n"))
	j, err := svc.Submit(ctx, "cka", []byte(`{"x":"`+x.ID+`","y":"`+y.ID+`"}`))
	if err != nil {
		log.Fatal(err)
	}
	for !j.Status.Terminal() {
		time.Sleep(5 * time.Millisecond)
		j, _ = svc.Job(ctx, j.ID)
	}
	var res struct{ CKA float64 }
	json.Unmarshal(j.Result, &res)
	fmt.Printf("%s: linear CKA %.6f\n", j.Status, res.CKA)

	// A request naming a file that was not uploaded is refused at once,
	// naming the field.
	_, err = svc.Submit(ctx, "cka", []byte(`{"x":"/etc/passwd","y":"`+y.ID+`"}`))
	fmt.Println(err)
	// Output:
	// succeeded: linear CKA 0.325881
	// x "/etc/passwd" is not an upload id: upload the file with POST /api/v1/files and pass the id it returns
}
