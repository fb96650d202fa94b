package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

// clusterSpec is what the supervisor hands to one cluster process.
type clusterSpec struct {
	Name          string
	Dir           string
	APIServerPort int
	EtcdPort      int
	EtcdPeerPort  int
	ExecImages    execImages // images whose pods run as real processes (podexec.go)
}

// kcmControllers are the controllers Deployments, Services and namespaces need to
// behave as on a real cluster (notes/local-cluster.md).
var kcmControllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller",
	"garbage-collector-controller", "namespace-controller", "serviceaccount-controller",
	"endpoints-controller", "endpointslice-controller", "endpointslice-mirroring-controller",
	"node-lifecycle-controller", "pod-garbage-collector-controller", "disruption-controller",
	"root-ca-certificate-publisher-controller", "ttl-after-finished-controller",
	"horizontal-pod-autoscaler-controller", "resourcequota-controller",
	"clusterrole-aggregation-controller",
}

// runCluster starts etcd, kube-apiserver, kube-controller-manager, a binder and a
// node agent for one cluster and blocks until ctx is cancelled.
func runCluster(ctx context.Context, spec clusterSpec) error {
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(spec.Dir, "ready"))
	p, err := ensurePKI(filepath.Join(spec.Dir, "pki"))
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}

	etcd, err := startEtcd(spec)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()

	kubeconfigPath := filepath.Join(spec.Dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfigPath, spec, p); err != nil {
		return err
	}

	apiErr := make(chan error, 1)
	go func() { apiErr <- runAPIServer(ctx, spec, p) }()

	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return err
	}
	// client-go's default (5 QPS, burst 10) would let the node agent bind and report only a few
	// pods a second: hundreds of pods (bench/rollout.ts) would sit Pending for minutes.
	restCfg.QPS = 100
	restCfg.Burst = 200
	client := kubernetes.NewForConfigOrDie(restCfg)
	if err := waitReady(ctx, client, apiErr); err != nil {
		return err
	}

	kcmErr := make(chan error, 1)
	go func() { kcmErr <- runControllerManager(ctx, kubeconfigPath, p) }()

	agent := newNodeAgent(client, spec.Name+"-node", spec.Dir, spec.ExecImages)
	if err := agent.start(ctx); err != nil {
		return fmt.Errorf("node agent: %w", err)
	}

	if err := os.WriteFile(filepath.Join(spec.Dir, "ready"), []byte(time.Now().Format(time.RFC3339)), 0o644); err != nil {
		return err
	}
	klog.InfoS("cluster ready", "name", spec.Name, "port", spec.APIServerPort)

	select {
	case <-ctx.Done():
		_ = os.Remove(filepath.Join(spec.Dir, "ready"))
		agent.wait() // real pods stopped, their namespaces and the bridge removed
		// Let the apiserver drain before etcd (closed by the deferred Close) goes away.
		select {
		case <-apiErr:
		case <-time.After(10 * time.Second):
		}
		return nil
	case err := <-apiErr:
		return fmt.Errorf("kube-apiserver stopped: %w", err)
	case err := <-kcmErr:
		return fmt.Errorf("kube-controller-manager stopped: %w", err)
	}
}

func startEtcd(spec clusterSpec) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "etcd-" + spec.Name
	cfg.Dir = filepath.Join(spec.Dir, "etcd")
	// Test clusters trade durability for speed; data still survives a clean restart.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", spec.EtcdPort))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", spec.EtcdPeerPort))
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd did not become ready in 60s")
	}
}

func runAPIServer(ctx context.Context, spec clusterSpec, p *pki) error {
	s := apiserveroptions.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	args := []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", spec.EtcdPort),
		"--etcd-prefix=/registry",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", spec.APIServerPort),
		"--cert-dir=" + filepath.Join(spec.Dir, "pki"),
		"--tls-cert-file=" + p.ServingCert,
		"--tls-private-key-file=" + p.ServingKey,
		"--client-ca-file=" + p.CACert,
		"--token-auth-file=" + p.TokenFile,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.SAKey,
		"--service-account-signing-key-file=" + p.SAKey,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	if err := logsapi.ValidateAndApply(s.Logs, utilfeature.DefaultFeatureGate); err != nil {
		return err
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fmt.Errorf("kube-apiserver options: %v", errs)
	}
	return apiserverapp.Run(ctx, completed)
}

func runControllerManager(ctx context.Context, kubeconfig string, p *pki) error {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return err
	}
	s.Generic.ClientConnection.Kubeconfig = kubeconfig
	s.Generic.ClientConnection.QPS = 100
	s.Generic.ClientConnection.Burst = 200
	s.Generic.LeaderElection.LeaderElect = false
	s.Generic.Controllers = kcmControllers
	s.SecureServing.BindPort = 0
	s.Authentication.RemoteKubeConfigFileOptional = true
	s.Authorization.RemoteKubeConfigFileOptional = true
	s.Authentication.RemoteKubeConfigFile = kubeconfig
	s.Authorization.RemoteKubeConfigFile = kubeconfig
	s.SAController.ServiceAccountKeyFile = p.SAKey
	s.SAController.RootCAFile = p.CACert
	// Node health: notice a dead node agent fast, but evict only after a long while.
	s.NodeLifecycleController.NodeMonitorGracePeriod.Duration = 40 * time.Second
	_ = basecompatibility.DefaultKubeComponent
	c, err := s.Config(ctx, kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases())
	if err != nil {
		return err
	}
	return kcmapp.Run(ctx, c.Complete())
}

func waitReady(ctx context.Context, client *kubernetes.Clientset, apiErr <-chan error) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 120*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-apiErr:
			return false, fmt.Errorf("kube-apiserver exited: %w", err)
		default:
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			return false, nil
		}
		if _, err = client.CoreV1().Namespaces().Get(ctx, "default", metav1GetOptions); err != nil {
			return false, nil
		}
		// /readyz turns ok before discovery lists every built-in group; clients that
		// probe discovery right after "ready" must see the whole set.
		groups, err := client.Discovery().ServerGroups()
		if err != nil {
			return false, nil
		}
		seen := map[string]bool{}
		for _, g := range groups.Groups {
			seen[g.Name] = true
		}
		return seen["apps"] && seen["rbac.authorization.k8s.io"] && seen["apiextensions.k8s.io"] && seen["apiregistration.k8s.io"], nil
	})
}

func writeKubeconfig(path string, spec clusterSpec, p *pki) error {
	ca, err := os.ReadFile(p.CACert)
	if err != nil {
		return err
	}
	// The user name is unique per cluster: client-node caches credentials by user name.
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: https://127.0.0.1:%[2]d
    certificate-authority-data: %[3]s
users:
- name: %[1]s-admin
  user:
    token: %[4]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s-admin
current-context: %[1]s
`, spec.Name, spec.APIServerPort, base64.StdEncoding.EncodeToString(ca), p.Token)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(cfg), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
