// Command anvil is Anvil's controller manager, network services and admin CLI.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "anvil",
		Short:         "Turn bare-metal servers into Kubernetes nodes and upgrade them in place",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return applyEnv(cmd.Flags(), os.LookupEnv)
		},
	}
	root.AddCommand(newServeCommand(), newDevCommand(), newHostsCommand(), newMachinesCommand(), newMachineSetsCommand(), newTicketsCommand(), newBMCCommand(), newConsoleCommand(), newVersionCommand())
	return root
}

// applyEnv fills every flag not given on the command line from ANVIL_<FLAG>
// (upper case, dashes as underscores), so flags and env parse once, here.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var firstErr error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil {
			return
		}
		name := "ANVIL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := lookup(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				firstErr = fmt.Errorf("%s: %w", name, err)
			}
		}
	})
	return firstErr
}
