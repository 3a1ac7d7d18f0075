package frechet

import "fmt"

// Key is what every part of one sharded computation shares besides the
// shard count, on one line: the input listing, the provenance and the
// dimension. The statistics service keeps it beside a name's shard count
// and refuses a part whose key differs, so that the service and
// `stats merge` (Compatible) accept the same sets of parts; use
// Compatible to say in words what differs.
func (p *Part) Key() string {
	l := p.Listing
	return fmt.Sprintf("%s of %d (cols %d, sha256 %s); %s; dim %d", l.Kind, l.Count, l.Cols, l.SHA256, p.Prov, p.Dim())
}
