package main

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The fields of results.Storm this program reads.
type stormResults struct {
	Sizes []struct {
		Hosts int `json:"hosts"`
		Runs  []struct {
			Hosts     int       `json:"hosts"`
			Succeeded int       `json:"succeeded"`
			TTLB      []float64 `json:"ttlb"`
			Error     string    `json:"error"`
		} `json:"runs"`
	} `json:"sizes"`
}

// stormPlot: one histogram per rack size of the time to last byte per
// host, all runs pooled, side by side.
func stormPlot(s *stormResults, path string) error {
	var row []*plot.Plot
	for _, z := range s.Sizes {
		var vals plotter.Values
		failed, runs := 0, 0
		for _, r := range z.Runs {
			if r.Error != "" {
				continue
			}
			runs++
			failed += r.Hosts - r.Succeeded
			vals = append(vals, r.TTLB...)
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%d hosts (%d runs, %d failed)", z.Hosts, runs, failed)
		p.X.Label.Text = "seconds from power-on to the config's last byte"
		p.Y.Label.Text = "hosts"
		p.X.Min = 0
		if len(vals) > 0 {
			top := 0.0
			for _, v := range vals {
				top = max(top, v)
			}
			p.X.Max = top * 1.05
			h, err := plotter.NewHist(vals, 30)
			if err != nil {
				return err
			}
			h.FillColor = color.RGBA{R: 70, G: 110, B: 180, A: 255}
			h.LineStyle.Color = color.White
			p.Add(h)
		}
		p.Add(plotter.NewGrid())
		row = append(row, p)
	}
	if len(row) == 0 {
		return nil
	}
	w, h := vg.Length(len(row))*4*vg.Inch, 3.5*vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{row}, t, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Close()
}
