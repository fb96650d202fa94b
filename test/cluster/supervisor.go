package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

type ports struct {
	APIServer int `json:"apiserver"`
	Etcd      int `json:"etcd"`
	EtcdPeer  int `json:"etcdPeer"`
}

type member struct {
	name  string
	dir   string
	ports ports

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool // stopped on purpose through the control endpoint
}

type supervisor struct {
	dir        string
	members    []*member
	execImages []string // --exec-image values, handed to every cluster process
}

func clusterName(i int) string {
	if i == 0 {
		return "hub"
	}
	return fmt.Sprintf("member-%d", i)
}

func newSupervisor(dir string, n, basePort int) (*supervisor, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create --dir %s: %w", dir, err)
	}
	_ = os.Remove(filepath.Join(abs, "ready"))
	s := &supervisor{dir: abs}
	for i := 0; i < n; i++ {
		m := &member{name: clusterName(i), dir: filepath.Join(abs, clusterName(i))}
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return nil, err
		}
		p, err := choosePorts(m, basePort, i)
		if err != nil {
			return nil, err
		}
		m.ports = p
		s.members = append(s.members, m)
	}
	return s, nil
}

// choosePorts reuses a cluster's earlier ports when its directory already has them
// (its kubeconfig stays valid), takes base+10*i when --base-port is given, and
// otherwise asks the kernel for free ones. Every port is checked before any process starts.
func choosePorts(m *member, basePort, i int) (ports, error) {
	var p ports
	file := filepath.Join(m.dir, "ports.json")
	switch {
	case basePort > 0:
		p = ports{basePort + 10*i, basePort + 10*i + 1, basePort + 10*i + 2}
	default:
		if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &p) == nil && p.APIServer > 0 {
			if portsFree(p) == nil {
				break
			}
		}
		var err error
		if p.APIServer, err = freePort(); err != nil {
			return p, err
		}
		if p.Etcd, err = freePort(); err != nil {
			return p, err
		}
		if p.EtcdPeer, err = freePort(); err != nil {
			return p, err
		}
	}
	if err := portsFree(p); err != nil {
		return p, fmt.Errorf("cluster %s: %w", m.name, err)
	}
	b, _ := json.Marshal(p)
	return p, os.WriteFile(file, b, 0o644)
}

func portsFree(p ports) error {
	for _, x := range []struct {
		what string
		port int
	}{{"apiserver", p.APIServer}, {"etcd", p.Etcd}, {"etcd peer", p.EtcdPeer}} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", x.port))
		if err != nil {
			return fmt.Errorf("port %d (%s) is already in use or not available: %v", x.port, x.what, err)
		}
		l.Close()
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *supervisor) run(ctx context.Context) error {
	ctl, err := s.serveControl()
	if err != nil {
		return err
	}
	defer ctl.Close()
	defer s.stopAll()

	start := time.Now()
	errs := make(chan error, len(s.members))
	for _, m := range s.members {
		go func(m *member) { errs <- s.startMember(ctx, m) }(m)
	}
	for range s.members {
		if err := <-errs; err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "ready"), []byte(fmt.Sprintf("%.3f\n", time.Since(start).Seconds())), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kube-local: %d cluster(s) ready in %.1fs under %s\n", len(s.members), time.Since(start).Seconds(), s.dir)

	// A cluster that dies on its own (not stopped through the control endpoint) is fatal:
	// tests would otherwise hang on a cluster that is not coming back.
	died := make(chan string, len(s.members))
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				for _, m := range s.members {
					m.mu.Lock()
					if m.exited != nil && !m.stopped {
						select {
						case <-m.exited:
							died <- m.name
						default:
						}
					}
					m.mu.Unlock()
				}
			}
		}
	}()
	select {
	case <-ctx.Done():
		_ = os.Remove(filepath.Join(s.dir, "ready"))
		return nil
	case name := <-died:
		_ = os.Remove(filepath.Join(s.dir, "ready"))
		return fmt.Errorf("cluster %s exited unexpectedly; see %s", name, filepath.Join(s.dir, name, "log"))
	}
}

// startMember starts a cluster process and waits for its ready file.
func (s *supervisor) startMember(ctx context.Context, m *member) error {
	m.mu.Lock()
	if m.cmd != nil && m.exited != nil {
		select {
		case <-m.exited:
		default:
			m.mu.Unlock()
			return nil // already running
		}
	}
	_ = os.Remove(filepath.Join(m.dir, "ready"))
	logf, err := os.OpenFile(filepath.Join(m.dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	self, _ := os.Executable()
	args := []string{"run-cluster", "--name", m.name, "--dir", m.dir,
		fmt.Sprint("--apiserver-port=", m.ports.APIServer), fmt.Sprint("--etcd-port=", m.ports.Etcd), fmt.Sprint("--etcd-peer-port=", m.ports.EtcdPeer)}
	for _, v := range s.execImages {
		args = append(args, "--exec-image="+v)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: a supervisor killed with SIGKILL still takes its clusters with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		m.mu.Unlock()
		logf.Close()
		return fmt.Errorf("cluster %s: %w", m.name, err)
	}
	exited := make(chan struct{})
	m.cmd, m.exited, m.stopped = cmd, exited, false
	_ = os.WriteFile(filepath.Join(m.dir, "pid"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	m.mu.Unlock()

	deadline := time.After(180 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(m.dir, "ready")); err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("cluster %s failed to start:\n%s", m.name, tail(filepath.Join(m.dir, "log"), 15))
		case <-deadline:
			return fmt.Errorf("cluster %s not ready after 180s; see %s", m.name, filepath.Join(m.dir, "log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *supervisor) stopMember(m *member, purposeful bool) {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	if purposeful {
		m.stopped = true
	}
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	// Signal the whole process group: the cluster process and anything it forked.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	_ = os.Remove(filepath.Join(m.dir, "ready"))
}

func (s *supervisor) stopAll() {
	var wg sync.WaitGroup
	for _, m := range s.members {
		wg.Add(1)
		go func(m *member) { defer wg.Done(); s.stopMember(m, true) }(m)
	}
	wg.Wait()
}

// serveControl serves POST /stop?cluster=NAME, POST /start?cluster=NAME and GET /status
// on loopback, for tests that take one cluster's control plane away and bring it back.
func (s *supervisor) serveControl() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	find := func(name string) *member {
		for _, m := range s.members {
			if m.name == name {
				return m
			}
		}
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/stop", func(w http.ResponseWriter, r *http.Request) {
		m := find(r.URL.Query().Get("cluster"))
		if r.Method != http.MethodPost || m == nil {
			http.Error(w, "POST /stop?cluster=<known name>", http.StatusBadRequest)
			return
		}
		s.stopMember(m, true)
		fmt.Fprintf(w, "stopped %s\n", m.name)
	})
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		m := find(r.URL.Query().Get("cluster"))
		if r.Method != http.MethodPost || m == nil {
			http.Error(w, "POST /start?cluster=<known name>", http.StatusBadRequest)
			return
		}
		if err := s.startMember(r.Context(), m); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "started %s\n", m.name)
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]any{}
		for _, m := range s.members {
			_, err := os.Stat(filepath.Join(m.dir, "ready"))
			m.mu.Lock()
			pid := 0
			if m.cmd != nil {
				pid = m.cmd.Process.Pid
			}
			m.mu.Unlock()
			out[m.name] = map[string]any{"ready": err == nil, "pid": pid, "ports": m.ports}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	go func() { _ = http.Serve(l, mux) }()
	if err := os.WriteFile(filepath.Join(s.dir, "control"), []byte("http://"+l.Addr().String()), 0o644); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
