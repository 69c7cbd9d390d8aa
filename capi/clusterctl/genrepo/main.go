// Command genrepo writes Anvil's clusterctl provider repository
// (`make clusterctl-repo`; capi/clusterctl/README.md).
package main

import (
	"flag"
	"fmt"
	"os"

	"anvil.dev/anvil/capi/clusterctl"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	out := flag.String("out", "bin/clusterctl-repo", "repository directory to write into")
	ver := flag.String("version", "v0.1.0", "release version (semantic, covered by metadata.yaml)")
	flag.Parse()
	p, err := clusterctl.WriteRepository(*root, *out, *ver)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genrepo:", err)
		os.Exit(1)
	}
	fmt.Println(p)
}
