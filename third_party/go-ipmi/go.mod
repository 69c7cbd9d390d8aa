module github.com/bougou/go-ipmi

go 1.24.0

require (
	github.com/go-ole/go-ole v1.3.0
	github.com/google/uuid v1.1.2
	github.com/kr/pretty v0.3.0
	github.com/olekukonko/tablewriter v1.0.9
	github.com/spf13/cobra v1.3.0
	golang.org/x/net v0.43.0
	golang.org/x/sys v0.35.0
	golang.org/x/term v0.34.0
)

require (
	github.com/fatih/color v1.15.0 // indirect
	github.com/inconshreveable/mousetrap v1.0.0 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.19 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/olekukonko/errors v1.1.0 // indirect
	github.com/olekukonko/ll v0.0.9 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/rogpeppe/go-internal v1.6.1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
)
