package reprjob

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/report/chart"
	"github.com/genlens/genlens/job"
)

// Artifacts returns the files of `disentangle --out`: cka_matrix.npy
// (P x P, pixels row-major), labels.npy (H x W), cluster_map.png,
// cka_heatmap.png (pixels ordered by cluster), cms.png, cms.csv and
// disentangle.json.
func (r *DisentangleResult) Artifacts() []job.Artifact {
	res := r.Analysis
	g := res.Grid
	return []job.Artifact{
		{Name: "cka_matrix.npy", Write: func(w io.Writer) error {
			P := g.Pixels()
			data := make([]float64, P*P)
			for p := 0; p < P; p++ {
				for q := 0; q < P; q++ {
					data[p*P+q] = res.CKA.At(p, q)
				}
			}
			return dataio.EncodeNPY(w, &dataio.Array{Shape: []int{P, P}, Data: data})
		}},
		{Name: "labels.npy", Write: func(w io.Writer) error {
			labels := make([]float64, len(res.Labels))
			for p, c := range res.Labels {
				labels[p] = float64(c)
			}
			return dataio.EncodeNPY(w, &dataio.Array{Shape: []int{g.H, g.W}, Data: labels})
		}},
		{Name: "cluster_map.png", Write: func(w io.Writer) error {
			return job.PNGTo(w)(chart.NewClusterMap(fmt.Sprintf("Pixel clusters (%dx%d)", g.H, g.W), res.Labels, g.H, g.W))
		}},
		{Name: "cka_heatmap.png", Write: r.WriteCKAHeatmap},
		{Name: "cms.png", Write: r.WriteCMSChart},
		{Name: "cms.csv", Write: r.writeCSV},
		{Name: "disentangle.json", Write: func(w io.Writer) error { return dataio.EncodeJSON(w, r) }},
	}
}

func (r *DisentangleResult) writeCSV(w io.Writer) error {
	header := []string{"name", "cms_image", "cms_product", "mmd2"}
	for c := 0; c < r.Clusters; c++ {
		header = append(header, fmt.Sprintf("cms_cluster_%d", c))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, s := range r.Sets {
		row := []string{s.Name, job.CSVNum(s.CMSImage), job.CSVNum(s.CMSProduct), job.CSVNum(s.MMD2)}
		for _, v := range s.CMSClusters {
			row = append(row, job.CSVNum(v))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCKAHeatmap draws the pixel CKA matrix, pixels ordered by cluster
// and averaged over blocks to at most 256 rows, as a PNG.
func (r *DisentangleResult) WriteCKAHeatmap(w io.Writer) error {
	hm, labels := r.orderedCKA(256)
	return job.PNGTo(w)(chart.NewHeatmap("Pixel CKA, pixels ordered by cluster", hm, labels, 0, 1))
}

// orderedCKA returns the CKA matrix with pixels ordered by cluster (in
// pixel order within a cluster), averaged over blocks of pixels so that it
// has at most limit rows, and a label per row naming its cluster.
func (r *DisentangleResult) orderedCKA(limit int) ([][]float64, []string) {
	res := r.Analysis
	P := len(res.Labels)
	order := make([]int, P)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return res.Labels[a] - res.Labels[b] })
	step := (P + limit - 1) / limit
	n := (P + step - 1) / step
	m := make([][]float64, n)
	cnt := make([][]float64, n)
	labels := make([]string, n)
	for i := range m {
		m[i] = make([]float64, n)
		cnt[i] = make([]float64, n)
		labels[i] = fmt.Sprintf("c%d", res.Labels[order[i*step]])
	}
	for a, p := range order {
		for b, q := range order {
			m[a/step][b/step] += res.CKA.At(p, q)
			cnt[a/step][b/step]++
		}
	}
	for i := range m {
		for j := range m[i] {
			m[i][j] /= cnt[i][j]
		}
	}
	return m, labels
}

// WriteCMSChart draws, as a PNG, the image-wise CMS, the product of the
// cluster CMS and every cluster's CMS across the generated sets (bars of
// 1 - CMS for a single set).
func (r *DisentangleResult) WriteCMSChart(w io.Writer) error {
	return job.PNGTo(w)(r.cmsChart())
}

func (r *DisentangleResult) cmsChart() (*chart.Figure, error) {
	k := r.Clusters
	if len(r.Sets) == 1 {
		// One set: bars of 1 - CMS, since CMS values near 1 would all
		// look alike on bars drawn from 0.
		s := r.Sets[0]
		labels := []string{"image", "product"}
		values := []float64{1 - float64(s.CMSImage), 1 - float64(s.CMSProduct)}
		for c, v := range s.CMSClusters {
			labels = append(labels, fmt.Sprintf("c%d", c))
			values = append(values, 1-float64(v))
		}
		return chart.NewBars("1 - CMS of "+s.Name+" (0 = like the test images)", "1 - CMS", labels, values, nil)
	}
	// Clusters first, so that cluster c gets the colour it has in the
	// cluster map (chart.ClusterColor follows chart's series colours).
	x := make([]float64, len(r.Sets))
	series := make([]chart.Series, k+2)
	for c := 0; c < k; c++ {
		series[c].Name = fmt.Sprintf("cluster %d", c)
	}
	series[k].Name, series[k+1].Name = "image-wise CMS", "product of cluster CMS"
	for i, s := range r.Sets {
		x[i] = float64(i + 1)
		for c, v := range s.CMSClusters {
			series[c].Y = append(series[c].Y, float64(v))
		}
		series[k].Y = append(series[k].Y, float64(s.CMSImage))
		series[k+1].Y = append(series[k+1].Y, float64(s.CMSProduct))
	}
	for i := range series {
		series[i].X = x
	}
	names := make([]string, len(r.Sets))
	for i, s := range r.Sets {
		names[i] = fmt.Sprintf("%d=%s", i+1, s.Name)
	}
	xlabel := "generated set"
	if len(names) <= 6 {
		xlabel += " (" + strings.Join(names, ", ") + ")"
	}
	return chart.NewLines("CMS across the generated sets", xlabel, "CMS", series)
}
