// Command kube-local runs N real Kubernetes control planes on this machine, one
// process per cluster (kube-apiserver and kube-controller-manager keep process-wide
// globals, so two of them cannot share a process safely).
//
//	kube-local --clusters N --dir DIR [--base-port P] [--exec-image REPO=COMMAND…]
//
// Pods whose image is REPO:TAG run as real processes (COMMAND, with DEMO_VERSION=TAG) in
// network namespaces of their own when kube-local runs as root (podexec.go). Default:
// sluice.dev/demo-app=node <repo>/test/demo-app/server.mjs when that file is found next
// to the binary (bin/kube-local in the repository); --exec-image none disables it.
//
// writes DIR/<name>/kubeconfig per cluster, DIR/ready once all answer /readyz, and
// DIR/control (the address of a loopback HTTP endpoint that stops and starts single
// clusters for failure tests). SIGTERM or SIGINT stops everything.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "run-cluster" {
		os.Exit(runClusterCommand(os.Args[2:]))
	}
	os.Exit(supervisorCommand(os.Args[1:]))
}

func usageError(fs *pflag.FlagSet, err error) int {
	fmt.Fprintf(os.Stderr, "kube-local: %v\n", err)
	fmt.Fprintf(os.Stderr, "usage: kube-local --clusters N --dir DIR [--base-port PORT] [--exec-image REPO=COMMAND]…\n%s", fs.FlagUsages())
	return 2
}

func supervisorCommand(args []string) int {
	fs := pflag.NewFlagSet("kube-local", pflag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	clusters := fs.Int("clusters", 1, "number of clusters to start (hub, member-1, …)")
	dir := fs.String("dir", "", "directory for kubeconfigs, data and logs (required)")
	basePort := fs.Int("base-port", 0, "first port to use; cluster i uses base+10*i (apiserver), +1 and +2 (etcd). 0 picks free ports")
	execFlags := fs.StringArray("exec-image", nil, "IMAGE_REPOSITORY=COMMAND [ARGS…]: run pods of that image as real processes (repeatable; 'none' disables the default)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return usageError(fs, err)
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *dir == "" {
		return usageError(fs, fmt.Errorf("--dir is required"))
	}
	if *clusters < 1 || *clusters > 10 {
		return usageError(fs, fmt.Errorf("--clusters must be between 1 and 10, got %d", *clusters))
	}
	if *basePort < 0 || *basePort > 65535-10*(*clusters) {
		return usageError(fs, fmt.Errorf("--base-port %d out of range", *basePort))
	}

	if len(*execFlags) == 0 {
		*execFlags = defaultExecImages()
	} else if len(*execFlags) == 1 && (*execFlags)[0] == "none" {
		*execFlags = nil
	}
	if _, err := parseExecImages(*execFlags); err != nil {
		return usageError(fs, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	sup, err := newSupervisor(*dir, *clusters, *basePort)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube-local: %v\n", err)
		return 1
	}
	sup.execImages = *execFlags
	if err := sup.run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "kube-local: %v\n", err)
		return 1
	}
	return 0
}

func runClusterCommand(args []string) int {
	fs := pflag.NewFlagSet("kube-local run-cluster", pflag.ContinueOnError)
	var spec clusterSpec
	fs.StringVar(&spec.Name, "name", "", "cluster name")
	fs.StringVar(&spec.Dir, "dir", "", "cluster directory")
	fs.IntVar(&spec.APIServerPort, "apiserver-port", 0, "")
	fs.IntVar(&spec.EtcdPort, "etcd-port", 0, "")
	fs.IntVar(&spec.EtcdPeerPort, "etcd-peer-port", 0, "")
	execFlags := fs.StringArray("exec-image", nil, "")
	if err := fs.Parse(args); err != nil {
		return usageError(fs, err)
	}
	images, err := parseExecImages(*execFlags)
	if err != nil {
		return usageError(fs, err)
	}
	spec.ExecImages = images
	if spec.Name == "" || spec.Dir == "" || spec.APIServerPort == 0 || spec.EtcdPort == 0 || spec.EtcdPeerPort == 0 {
		return usageError(fs, fmt.Errorf("run-cluster needs --name, --dir and all ports"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := runCluster(ctx, spec); err != nil {
		fmt.Fprintf(os.Stderr, "kube-local: cluster %s: %v\n", spec.Name, err)
		return 1
	}
	return 0
}

// defaultExecImages runs the demo app of the repository this binary was built in
// (bin/kube-local → test/demo-app/server.mjs) with the node on PATH, if both exist.
func defaultExecImages() []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	script := filepath.Join(filepath.Dir(self), "..", "test", "demo-app", "server.mjs")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(script); serr != nil || err != nil {
		return nil
	}
	abs, _ := filepath.Abs(script)
	return []string{"sluice.dev/demo-app=" + node + " " + abs}
}
