package jpeg

import "fmt"

func (d *decoder) decodeArithScan(s *scan) error {
	return fmt.Errorf("jpeg: arithmetic coding is not supported")
}
