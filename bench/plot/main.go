// Command plot draws the benchmark PNGs from bench/results.json with
// gonum/plot. It is its own module so the main module does not carry
// gonum/plot and its font and image dependencies.
//
//	go run . -in ../results.json -out ..
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// The fields of anvil.dev/anvil/bench/internal/results this program reads.
type run struct {
	DHCP *struct {
		MaxDrop      float64 `json:"maxDrop"`
		Reservations int     `json:"reservations"`
		Subjects     []struct {
			Name string `json:"name"`
			Mode string `json:"mode"` // "relay" or "broadcast"; empty: relay (older results)
			Runs []struct {
				MaxRate float64 `json:"maxRate"`
				Steps   []struct {
					Offered  int     `json:"offered"`
					Achieved float64 `json:"achieved"`
					Drop     float64 `json:"drop"`
				} `json:"steps"`
			} `json:"runs"`
		} `json:"subjects"`
	} `json:"dhcp"`
	HTTP *struct {
		FileBytes float64 `json:"fileBytes"`
		Subjects  []struct {
			Name  string `json:"name"`
			Cells []struct {
				Clients int `json:"clients"`
				Runs    []struct {
					MBps float64 `json:"mbps"`
				} `json:"runs"`
			} `json:"cells"`
		} `json:"subjects"`
	} `json:"http"`
	Storm *stormResults `json:"storm"`
	TFTP  *struct {
		Subjects []struct {
			Name  string `json:"name"`
			Cells []struct {
				File       string `json:"file"`
				BlockSize  int    `json:"blockSize"`
				Clients    int    `json:"clients"`
				WindowSize int    `json:"windowSize"`
				Impaired   bool   `json:"impaired"`
				Runs       []struct {
					MBps float64 `json:"mbps"`
				} `json:"runs"`
			} `json:"cells"`
		} `json:"subjects"`
	} `json:"tftp"`
}

func main() {
	in := flag.String("in", "../results.json", "results file")
	out := flag.String("out", "..", "directory for the PNGs")
	flag.Parse()
	b, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	var r run
	if err := json.Unmarshal(b, &r); err != nil {
		fail(fmt.Errorf("%s: %w", *in, err))
	}
	if r.DHCP != nil {
		if err := dhcpPlot(&r, filepath.Join(*out, "dhcp-rate.png")); err != nil {
			fail(err)
		}
	}
	if r.HTTP != nil {
		if err := httpPlot(&r, filepath.Join(*out, "http.png")); err != nil {
			fail(err)
		}
	}
	if r.TFTP != nil {
		if err := tftpPlot(&r, filepath.Join(*out, "tftp.png")); err != nil {
			fail(err)
		}
	}
	if r.Storm != nil && len(r.Storm.Sizes) > 0 {
		if err := stormPlot(r.Storm, filepath.Join(*out, "storm.png")); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "plot:", err)
	os.Exit(1)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// dhcpPlot: completed DORA/s against offered rate, for each subject's
// median run (by its maximum rate), with the ideal y = x.
func dhcpPlot(r *run, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("DHCP: completed vs offered DORA/s (%d reservations)", r.DHCP.Reservations)
	p.X.Label.Text = "offered DORA/s"
	p.Y.Label.Text = "completed DORA/s"
	p.Legend.Top, p.Legend.Left = true, true
	maxX := 0.0
	var args []any
	for _, s := range r.DHCP.Subjects {
		if len(s.Runs) == 0 {
			continue
		}
		idx := make([]int, len(s.Runs))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return s.Runs[idx[a]].MaxRate < s.Runs[idx[b]].MaxRate })
		mr := s.Runs[idx[len(idx)/2]]
		pts := make(plotter.XYs, 0, len(mr.Steps))
		for _, st := range mr.Steps {
			pts = append(pts, plotter.XY{X: float64(st.Offered), Y: st.Achieved})
			maxX = max(maxX, float64(st.Offered))
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		mode := s.Mode
		if mode == "" {
			mode = "relay"
		}
		args = append(args, s.Name+" ("+mode+")", pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	ideal, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: maxX, Y: maxX}})
	if err != nil {
		return err
	}
	ideal.Color = color.Gray{Y: 180}
	ideal.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(ideal)
	p.Legend.Add("offered = completed", ideal)
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// httpPlot: aggregate MB/s by client count, grouped bars per subject.
func httpPlot(r *run, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("HTTP: %.0f MB artifact, aggregate MB/s (median of runs)", r.HTTP.FileBytes/1e6)
	p.Y.Label.Text = "MB/s"
	var labels []string
	top := 0.0
	w := vg.Points(18)
	subs := r.HTTP.Subjects
	for i, s := range subs {
		vals := plotter.Values{}
		for _, c := range s.Cells {
			var xs []float64
			for _, m := range c.Runs {
				xs = append(xs, m.MBps)
			}
			vals = append(vals, median(xs))
			top = max(top, median(xs))
			if i == 0 {
				labels = append(labels, fmt.Sprintf("%d clients", c.Clients))
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(subs)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	finishBars(p, labels, top)
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// tftpPlot: MB/s of ipxe.efi (or the first file) at blksize 1468 without
// windowsize on the plain link, by client count, grouped bars per subject.
func tftpPlot(r *run, path string) error {
	file := ""
	for _, s := range r.TFTP.Subjects {
		for _, c := range s.Cells {
			if c.File == "ipxe.efi" || file == "" {
				file = c.File
			}
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("TFTP: %s, blksize 1468, MB/s (median of runs)", file)
	p.Y.Label.Text = "MB/s"
	w := vg.Points(14)
	subs := r.TFTP.Subjects
	var labels []string
	top := 0.0
	for i, s := range subs {
		vals := plotter.Values{}
		for _, c := range s.Cells {
			if c.File != file || c.BlockSize != 1468 || c.WindowSize != 0 || c.Impaired {
				continue
			}
			var xs []float64
			for _, m := range c.Runs {
				xs = append(xs, m.MBps)
			}
			vals = append(vals, median(xs))
			top = max(top, median(xs))
			if i == 0 {
				labels = append(labels, fmt.Sprintf("%d clients", c.Clients))
			}
		}
		if len(vals) == 0 {
			continue
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(subs)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	finishBars(p, labels, top)
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// finishBars leaves room for the legend above the bars and around the
// outer groups.
func finishBars(p *plot.Plot, labels []string, top float64) {
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(8)
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(labels))-0.4
	p.Y.Min, p.Y.Max = 0, top*1.35
	p.Add(plotter.NewGrid())
}
