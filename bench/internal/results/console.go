package results

// Console is the admin console benchmark (the issue "admin console"): the
// racks page of `anvil console` with Hosts in one namespace, in headless
// Chromium, beside kubectl against the same API server in the same run.
type Console struct {
	// Measured says when this part ran.
	Measured *Measured `json:"measured,omitempty"`
	Hosts    int       `json:"hosts"`
	Racks    int       `json:"racks"`
	// Problems is how many Hosts have BMCReachable=False (red tiles).
	Problems int `json:"problems"`
	// Setup is one line: API server, console, browser, kubectl versions.
	Setup string `json:"setup"`
	// Updates is how many single-Host updates each run times; BurstHosts
	// how many Hosts the burst patches at once.
	Updates    int          `json:"updates"`
	BurstHosts int          `json:"burstHosts"`
	Runs       []ConsoleRun `json:"runs"`
	Error      string       `json:"error,omitempty"`
}

// ConsoleRun is one run: a fresh `anvil console` process, a fresh browser
// and fresh kubectl processes against the same API server and Hosts.
type ConsoleRun struct {
	// FirstPage is the first load of /racks (the console's store of the
	// person lists the Hosts then), SecondPage the pager's next page,
	// FirstPageWarm page 1 loaded again.
	FirstPage     PageLoad `json:"firstPage"`
	SecondPage    PageLoad `json:"secondPage"`
	FirstPageWarm PageLoad `json:"firstPageWarm"`
	// UpdateMs: per single-Host status patch, ms from sending the patch to
	// the tile's data-power changing in the DOM (MutationObserver,
	// Date.now() against the same machine's clock).
	UpdateMs []float64 `json:"updateMs"`
	// Burst: BurstHosts patched at once (16 concurrent requests), all on
	// the page shown.
	Burst ConsoleBurst `json:"burst"`
	// Memory after page 1 loaded and settled, and after the burst.
	Loaded     BrowserMemory `json:"loaded"`
	AfterBurst BrowserMemory `json:"afterBurst"`
	// Console is the `anvil console` process: RSS and CPU seconds.
	Console ConsoleProcess `json:"console"`
	// Kubectl is the peer in the same run.
	Kubectl KubectlRun `json:"kubectl"`
	Error   string     `json:"error,omitempty"`
}

// PageLoad is one navigation, in ms from its start (Navigation Timing:
// performance.timeOrigin).
type PageLoad struct {
	// ResponseEnd: the HTML received; DOMContentLoaded: parsed, every tile
	// in the DOM; Rendered: the first animation frame after that (layout
	// and paint of the tiles); LiveOpen: the EventSource of /live open.
	ResponseEnd      float64 `json:"responseEnd"`
	DOMContentLoaded float64 `json:"domContentLoaded"`
	Rendered         float64 `json:"rendered"`
	LiveOpen         float64 `json:"liveOpen"`
	// Ready is max(Rendered, LiveOpen): the headline time to first render.
	Ready float64 `json:"ready"`
	// WallMs is the benchmark's wall clock from asking for the navigation
	// to seeing the tiles and the stream open (polled every 20 ms).
	WallMs    float64 `json:"wallMs"`
	Tiles     int     `json:"tiles"`
	Racks     int     `json:"racks"`
	HTMLBytes float64 `json:"htmlBytes"` // transferred (encodedBodySize)
}

// ConsoleBurst is the burst of patches.
type ConsoleBurst struct {
	Hosts int `json:"hosts"`
	// SendSeconds: until the API server had accepted every patch.
	SendSeconds float64 `json:"sendSeconds"`
	// FirstMs and AllMs: from the first patch sent to the first and to the
	// last of the Hosts' tiles changed in the DOM (Changed of Hosts).
	FirstMs float64 `json:"firstMs"`
	AllMs   float64 `json:"allMs"`
	Changed int     `json:"changed"`
	// LiveUpdates is how many live patch events the page applied.
	LiveUpdates int `json:"liveUpdates"`
}

// BrowserMemory is the page's memory (Chrome DevTools Performance.getMetrics)
// and the renderer's RSS from /proc.
type BrowserMemory struct {
	JSHeapUsed  float64 `json:"jsHeapUsed"` // bytes
	JSHeapTotal float64 `json:"jsHeapTotal"`
	DOMNodes    float64 `json:"domNodes"` // Performance.getMetrics Nodes
	Elements    float64 `json:"elements"` // document.getElementsByTagName("*").length
	RendererRSS int64   `json:"rendererRSS"`
	// ChromiumRSS: every chromium process (browser, GPU, utility, renderer).
	ChromiumRSS int64 `json:"chromiumRSS"`
}

// ConsoleProcess is `anvil console`'s own use.
type ConsoleProcess struct {
	IdleRSS int64 `json:"idleRSS"` // started, nobody signed in
	PeakRSS int64 `json:"peakRSS"`
	// CPU seconds over the page loads, the single updates and the burst.
	LoadCPU   float64 `json:"loadCPU"`
	UpdateCPU float64 `json:"updateCPU"`
	BurstCPU  float64 `json:"burstCPU"`
}

// KubectlRun is the peer: `kubectl get hosts -o wide` and `kubectl get
// hosts --watch --output-watch-events` against the same API server.
type KubectlRun struct {
	// GetCold: a fresh discovery cache; GetWarm: the second invocation.
	// Ms to the first line and to the end of the output (exit).
	GetCold KubectlGet `json:"getCold"`
	GetWarm KubectlGet `json:"getWarm"`
	// UpdateMs: the same patches as the console's, ms to the MODIFIED line.
	UpdateMs []float64 `json:"updateMs"`
	// BurstAllMs: from the first patch to the last Host's MODIFIED line.
	BurstFirstMs float64 `json:"burstFirstMs"`
	BurstAllMs   float64 `json:"burstAllMs"`
	BurstChanged int     `json:"burstChanged"`
	// WatchRSS: the watching kubectl after the burst; WatchCPU its CPU
	// seconds over the whole watch.
	WatchRSS int64   `json:"watchRSS"`
	WatchCPU float64 `json:"watchCPU"`
	Error    string  `json:"error,omitempty"`
}

// KubectlGet is one `kubectl get`.
type KubectlGet struct {
	FirstLineMs float64 `json:"firstLineMs"`
	TotalMs     float64 `json:"totalMs"`
	Lines       int     `json:"lines"`
	MaxRSS      int64   `json:"maxRSS"`
}
