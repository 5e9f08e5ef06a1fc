// The pod sandbox's one process (what registry.k8s.io/pause is upstream),
// written here so the node's images are made offline: it holds the pod's
// namespaces open, reaps any child that ends up with it, and exits at once
// on SIGINT or SIGTERM, so a pod stops without waiting for a SIGKILL.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
