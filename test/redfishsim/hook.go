package redfishsim

import (
	"os/exec"

	"github.com/go-logr/logr"
)

// CommandHook returns an OnPower hook that starts argv with four more
// arguments: "on" or "off", the system ID, the boot target of a power-on
// ("Pxe", "Hdd", or "" for the normal boot order) and the boot mode. A lab
// uses it to start or kill a QEMU VM. The command is started, not waited
// for (a BMC answers the reset before the server has booted); its exit
// status is logged at V(1).
func CommandHook(log logr.Logger, argv ...string) func(PowerEvent) {
	return func(ev PowerEvent) {
		if len(argv) == 0 {
			return
		}
		state := "off"
		if ev.On {
			state = "on"
		}
		args := append(append([]string(nil), argv[1:]...), state, ev.SystemID, ev.BootTarget, ev.BootMode)
		cmd := exec.Command(argv[0], args...)
		if err := cmd.Start(); err != nil {
			log.Error(err, "power hook did not start", "command", argv[0])
			return
		}
		go func() {
			err := cmd.Wait()
			log.V(1).Info("power hook finished", "command", argv[0], "state", state, "error", err)
		}()
	}
}
