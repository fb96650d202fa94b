package main

// Real pods: the node agent runs the containers of some images (--exec-image) as real
// processes, each in a network namespace of its own with a routable address, so that
// Services, EndpointSlices (from the real endpointslice controller) and a gateway outside
// the cluster carry real HTTP traffic to them. Every other image stays faked.
//
// Network layout per cluster process: a bridge slk<N> on the host with 10.250.<N>.1/24,
// where N is picked once per cluster directory (podnet.json) among the subnets no other
// bridge on the host uses (under a host-wide file lock, since several kube-local instances
// share the host). Each pod gets a namespace slk<N>-<uid8> with a veth pair whose host end
// is on the bridge and whose pod end is eth0 with 10.250.<N>.<k>/24 and a default route
// via the bridge; the host reaches every pod directly, and nothing leaves the machine.
// Fake pods keep their unroutable 10.244.x.y addresses, so the two ranges never collide.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
)

// execImages maps an image repository (the image without its tag) to the command that
// plays it; the tag is passed as $DEMO_VERSION.
type execImages map[string][]string

// parseExecImages reads `repo=command args…` values (the command split on blanks).
func parseExecImages(values []string) (execImages, error) {
	out := execImages{}
	for _, v := range values {
		repo, cmd, ok := strings.Cut(v, "=")
		argv := strings.Fields(cmd)
		if !ok || repo == "" || len(argv) == 0 {
			return nil, fmt.Errorf("--exec-image %q: want IMAGE_REPOSITORY=COMMAND [ARGS…]", v)
		}
		out[repo] = argv
	}
	return out, nil
}

// match returns the command for an image `repo:tag` and its tag, or nil.
func (m execImages) match(image string) ([]string, string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return nil, ""
	}
	if argv, ok := m[image[:i]]; ok {
		return argv, image[i+1:]
	}
	return nil, ""
}

const podNetBase = "10.250"

// podNet is one cluster's bridge and address pool.
type podNet struct {
	n      int // the third octet: subnet 10.250.n.0/24, bridge slk<n>
	bridge string
	gw     string
}

// realPods runs the real pods of one node agent.
type realPods struct {
	images  execImages
	dir     string // cluster directory: podnet.json and pods/<ns>_<name>.log
	net     podNet
	enqueue func(key string)
	ctx     context.Context

	mu   sync.Mutex
	pods map[types.UID]*realPod
	used map[int]bool // last octets in use
}

// realPod is one running (or restarting) pod process.
type realPod struct {
	key, netns, vethHost, ip string
	octet                    int
	argv                     []string
	env                      []string
	probeURL                 string
	container                string
	logPath                  string

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	running    bool
	ready      bool
	restarts   int32
	startedAt  time.Time
	lastExit   *corev1.ContainerStateTerminated
	stopping   bool
	stopProbes context.CancelFunc
}

// newRealPods prepares the pod network, or returns nil (with one log line saying why) when
// this process cannot run real pods: then every pod stays faked, as before.
func newRealPods(ctx context.Context, dir string, images execImages, enqueue func(string)) *realPods {
	if len(images) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		klog.InfoS("real pods disabled: kube-local is not running as root (network namespaces need it); pods of --exec-image images are faked")
		return nil
	}
	if _, err := exec.LookPath("ip"); err != nil {
		klog.InfoS("real pods disabled: the ip command (iproute2) is not installed; pods of --exec-image images are faked")
		return nil
	}
	pn, err := setupPodNet(dir)
	if err != nil {
		klog.ErrorS(err, "real pods disabled: cannot set up the pod network; pods of --exec-image images are faked")
		return nil
	}
	klog.InfoS("real pods enabled", "bridge", pn.bridge, "subnet", fmt.Sprintf("%s.%d.0/24", podNetBase, pn.n))
	return &realPods{images: images, dir: dir, net: pn, enqueue: enqueue, ctx: ctx, pods: map[types.UID]*realPod{}, used: map[int]bool{}}
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setupPodNet picks (or reuses) this cluster directory's subnet, removes what a killed
// earlier run left in it, and creates the bridge.
func setupPodNet(dir string) (podNet, error) {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "kube-local-podnet.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return podNet{}, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return podNet{}, err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()

	file := filepath.Join(dir, "podnet.json")
	var saved struct{ N int }
	n := 0
	if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &saved) == nil && saved.N > 0 {
		n = saved.N // ours from an earlier run: a leftover bridge of that name is ours too
	} else {
		taken := map[int]bool{}
		if ifs, err := net.Interfaces(); err == nil {
			for _, i := range ifs {
				if rest, ok := strings.CutPrefix(i.Name, "slk"); ok {
					if k, err := strconv.Atoi(rest); err == nil {
						if bridgeOwnerGone(i.Name) {
							// Left by a SIGKILLed cluster process of another directory.
							stale := podNet{n: k, bridge: i.Name}
							cleanupNamespaces(stale)
							_ = ipCmd("link", "del", i.Name)
							continue
						}
						taken[k] = true
					}
				}
			}
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && strings.HasPrefix(ipn.IP.String(), podNetBase+".") {
					k, _ := strconv.Atoi(strings.Split(ipn.IP.String(), ".")[2])
					taken[k] = true
				}
			}
		}
		for k := 1; k < 255 && n == 0; k++ {
			if !taken[k] {
				n = k
			}
		}
		if n == 0 {
			return podNet{}, errors.New("no free pod subnet in " + podNetBase + ".0.0/16")
		}
	}
	pn := podNet{n: n, bridge: fmt.Sprintf("slk%d", n), gw: fmt.Sprintf("%s.%d.1", podNetBase, n)}
	cleanupNamespaces(pn)
	_ = ipCmd("link", "del", pn.bridge)
	if err := ipCmd("link", "add", pn.bridge, "type", "bridge"); err != nil {
		return pn, err
	}
	if err := ipCmd("addr", "add", pn.gw+"/24", "dev", pn.bridge); err != nil {
		return pn, err
	}
	if err := ipCmd("link", "set", pn.bridge, "up"); err != nil {
		return pn, err
	}
	// The owner, so a later kube-local can tell a leftover bridge from a live one.
	_ = ipCmd("link", "set", "dev", pn.bridge, "alias", fmt.Sprintf("kube-local pid=%d", os.Getpid()))
	b, _ := json.Marshal(map[string]int{"N": n})
	return pn, os.WriteFile(file, b, 0o644)
}

// bridgeOwnerGone reports whether a pod bridge's owning cluster process (its alias) has exited.
func bridgeOwnerGone(bridge string) bool {
	b, err := os.ReadFile(filepath.Join("/sys/class/net", bridge, "ifalias"))
	if err != nil {
		return false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "kube-local pid=")
	pid, err := strconv.Atoi(rest)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// cleanupNamespaces kills what still runs in this subnet's namespaces and removes them
// (left by a cluster process that was SIGKILLed; its children die by Pdeathsig already).
func cleanupNamespaces(pn podNet) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	prefix := pn.bridge + "-"
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line) // "name (id: 3)"
		if len(fields) == 0 || !strings.HasPrefix(fields[0], prefix) {
			continue
		}
		name := fields[0]
		killNamespacePids(name)
		_ = ipCmd("netns", "del", name)
	}
}

func killNamespacePids(netns string) {
	out, _ := exec.Command("ip", "netns", "pids", netns).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// runnable returns the container of `pod` to run for real, its command and the image tag.
func (r *realPods) runnable(pod *corev1.Pod) (*corev1.Container, []string, string) {
	if r == nil {
		return nil, nil, ""
	}
	for i := range pod.Spec.Containers {
		if argv, tag := r.images.match(pod.Spec.Containers[i].Image); argv != nil {
			return &pod.Spec.Containers[i], argv, tag
		}
	}
	return nil, nil, ""
}

// ensure starts `pod`'s process if it does not run yet and returns its state.
func (r *realPods) ensure(pod *corev1.Pod) (*realPod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pods[pod.UID]; ok {
		return p, nil
	}
	c, argv, tag := r.runnable(pod)
	octet, ip, err := r.allocate(pod.Status.PodIP)
	if err != nil {
		return nil, err
	}
	p := &realPod{
		key:       pod.Namespace + "/" + pod.Name,
		netns:     fmt.Sprintf("%s-%s", r.net.bridge, strings.ReplaceAll(string(pod.UID), "-", "")[:8]),
		vethHost:  fmt.Sprintf("%sh%d", r.net.bridge, octet),
		ip:        ip,
		octet:     octet,
		container: c.Name,
		logPath:   filepath.Join(r.dir, "pods", pod.Namespace+"_"+pod.Name+".log"),
	}
	p.argv = append(append([]string{}, argv...), c.Args...)
	p.env, p.probeURL = containerEnv(pod, c, tag, ip)
	if err := r.createNamespace(p); err != nil {
		r.removeNamespace(p)
		delete(r.used, octet)
		return nil, err
	}
	r.pods[pod.UID] = p
	if err := r.start(p); err != nil {
		klog.ErrorS(err, "real pod start failed", "pod", p.key)
	}
	return p, nil
}

// allocate reuses the pod's earlier address (a pod's IP never changes; the agent may have
// restarted) when it is in this subnet, else takes a free one.
func (r *realPods) allocate(previous string) (int, string, error) {
	prefix := fmt.Sprintf("%s.%d.", podNetBase, r.net.n)
	if rest, ok := strings.CutPrefix(previous, prefix); ok {
		if k, err := strconv.Atoi(rest); err == nil && !r.used[k] {
			r.used[k] = true
			return k, previous, nil
		}
	}
	for k := 2; k < 255; k++ {
		if !r.used[k] {
			r.used[k] = true
			return k, prefix + strconv.Itoa(k), nil
		}
	}
	return 0, "", errors.New("pod subnet full (253 real pods)")
}

func (r *realPods) createNamespace(p *realPod) error {
	peer := fmt.Sprintf("%sp%d", r.net.bridge, p.octet)
	_ = ipCmd("netns", "del", p.netns)
	_ = ipCmd("link", "del", p.vethHost)
	steps := [][]string{
		{"netns", "add", p.netns},
		{"link", "add", p.vethHost, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", p.netns},
		{"link", "set", p.vethHost, "master", r.net.bridge, "up"},
		{"-n", p.netns, "link", "set", peer, "name", "eth0"},
		{"-n", p.netns, "addr", "add", p.ip + "/24", "dev", "eth0"},
		{"-n", p.netns, "link", "set", "eth0", "up"},
		{"-n", p.netns, "link", "set", "lo", "up"},
		{"-n", p.netns, "route", "add", "default", "via", r.net.gw},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			return err
		}
	}
	return nil
}

func (r *realPods) removeNamespace(p *realPod) {
	killNamespacePids(p.netns)
	_ = ipCmd("netns", "del", p.netns)
	_ = ipCmd("link", "del", p.vethHost)
}

// containerEnv is the process environment: PATH and HOME of the agent, the container's
// env (values and the common fieldRefs), PORT (first containerPort), METRICS_PORT (the
// port named "metrics"), DEMO_VERSION (the image tag) and the pod's identity. It also
// returns the readiness URL: the readinessProbe's httpGet, else /healthz on PORT.
func containerEnv(pod *corev1.Pod, c *corev1.Container, tag, ip string) ([]string, string) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"DEMO_VERSION=" + tag, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + pod.Namespace, "POD_IP=" + ip}
	port := 8080
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			env = append(env, fmt.Sprintf("METRICS_PORT=%d", p.ContainerPort))
		}
	}
	if len(c.Ports) > 0 {
		port = int(c.Ports[0].ContainerPort)
	}
	env = append(env, fmt.Sprintf("PORT=%d", port))
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			switch path := e.ValueFrom.FieldRef.FieldPath; {
			case path == "metadata.name":
				v = pod.Name
			case path == "metadata.namespace":
				v = pod.Namespace
			case path == "status.podIP":
				v = ip
			case strings.HasPrefix(path, "metadata.labels['"):
				v = pod.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
			}
		}
		env = append(env, e.Name+"="+v) // later entries win, as in a container
	}
	probePort, path := port, "/healthz"
	if rp := c.ReadinessProbe; rp != nil && rp.HTTPGet != nil {
		path = rp.HTTPGet.Path
		probePort = resolvePort(rp.HTTPGet.Port, c, port)
	}
	return env, fmt.Sprintf("http://%s/%s", net.JoinHostPort(ip, strconv.Itoa(probePort)), strings.TrimPrefix(path, "/"))
}

func resolvePort(p intstr.IntOrString, c *corev1.Container, fallback int) int {
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	return fallback
}

// start runs the process once; a watcher restarts it (restartCount++) when it exits,
// and a prober reports readiness.
func (r *realPods) start(p *realPod) error {
	if err := os.MkdirAll(filepath.Dir(p.logPath), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// `ip netns exec` enters the namespace and execs the command in place (no fork), so
	// the pid, its Pdeathsig (the pod dies with a SIGKILLed agent) and its group are the app's.
	cmd := exec.Command("ip", append([]string{"netns", "exec", p.netns}, p.argv...)...)
	cmd.Env = p.env
	cmd.Dir = r.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		logf.Close()
		return nil
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	probeCtx, cancel := context.WithCancel(r.ctx)
	p.cmd, p.exited, p.running, p.ready, p.startedAt, p.stopProbes = cmd, make(chan struct{}), true, false, time.Now(), cancel
	exited := p.exited
	go r.probe(probeCtx, p)
	go func() {
		err := cmd.Wait()
		logf.Close()
		cancel()
		code := int32(0)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = int32(ee.ExitCode())
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int32(ws.Signal()) // as a container runtime reports it (137 = SIGKILL)
			}
		}
		p.mu.Lock()
		p.running, p.ready = false, false
		p.lastExit = &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", StartedAt: metaTime(p.startedAt), FinishedAt: metaTime(time.Now())}
		if code == 0 {
			p.lastExit.Reason = "Completed"
		}
		stopping := p.stopping
		if !stopping {
			p.restarts++
		}
		restarts := p.restarts
		close(exited)
		p.mu.Unlock()
		if stopping || r.ctx.Err() != nil {
			return
		}
		klog.InfoS("real pod exited; restarting", "pod", p.key, "exitCode", code, "restarts", restarts)
		r.enqueue(p.key)
		backoff := time.Duration(1<<min(restarts-1, 4)) * 500 * time.Millisecond // 0.5 s … 8 s
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(backoff):
		}
		if err := r.start(p); err != nil {
			klog.ErrorS(err, "real pod restart failed", "pod", p.key)
		}
		r.enqueue(p.key)
	}()
	return nil
}

// probe polls the readiness URL (every 200 ms until ready, then every second; three
// failures in a row make it unready again, as a kubelet's failureThreshold would).
func (r *realPods) probe(ctx context.Context, p *realPod) {
	client := &http.Client{Timeout: time.Second}
	failures := 0
	for {
		ok := false
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.probeURL, nil)
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
			ok = res.StatusCode >= 200 && res.StatusCode < 400
		}
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		changed := false
		if ok {
			failures = 0
			changed = !p.ready
			p.ready = true
		} else if failures++; p.ready && failures >= 3 {
			changed = true
			p.ready = false
		}
		ready := p.ready
		p.mu.Unlock()
		if changed {
			r.enqueue(p.key)
		}
		wait := 200 * time.Millisecond
		if ready {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// stop kills the pod's process group (SIGTERM, SIGKILL after 3 s) and removes its namespace.
func (r *realPods) stop(uid types.UID) {
	r.mu.Lock()
	p, ok := r.pods[uid]
	delete(r.pods, uid)
	r.mu.Unlock()
	if !ok {
		return
	}
	p.mu.Lock()
	p.stopping = true
	cmd, exited, running := p.cmd, p.exited, p.running
	if p.stopProbes != nil {
		p.stopProbes()
	}
	p.mu.Unlock()
	if cmd != nil && running {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	r.removeNamespace(p)
	r.mu.Lock()
	delete(r.used, p.octet)
	r.mu.Unlock()
}

// stopKey stops the pod whose object is gone (deleted with grace 0 by someone else).
func (r *realPods) stopKey(key string) {
	r.mu.Lock()
	var uids []types.UID
	for uid, p := range r.pods {
		if p.key == key {
			uids = append(uids, uid)
		}
	}
	r.mu.Unlock()
	for _, uid := range uids {
		r.stop(uid)
	}
}

// shutdown stops every pod and removes the bridge (kube-local stopping).
func (r *realPods) shutdown() {
	r.mu.Lock()
	var uids []types.UID
	for uid := range r.pods {
		uids = append(uids, uid)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, uid := range uids {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop(uid) }()
	}
	wg.Wait()
	_ = ipCmd("link", "del", r.net.bridge)
}

// podState is what the pod's status reports about the process.
type podState struct {
	ip             string
	running, ready bool
	restarts       int32
	startedAt      time.Time
	lastExit       *corev1.ContainerStateTerminated
	container      string
}

func (p *realPod) state() podState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return podState{ip: p.ip, running: p.running, ready: p.ready, restarts: p.restarts, startedAt: p.startedAt, lastExit: p.lastExit, container: p.container}
}
