// Package install is the on-host side of agent.InstallPlan: it asks for
// the plan, streams the image onto the root disk while hashing it, finds
// the image's root partition in its GPT, writes the NoCloud seed into it
// and reports the outcome. The caller reboots.
package install
