package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

var metav1GetOptions = metav1.GetOptions{}

// nodeAgent plays kubelet and scheduler for one fake node: it keeps the Node Ready
// and its Lease renewed, binds pending pods to it, reports bound pods Running and
// Ready, completes Job pods, and finishes pod deletions. Containers are not run
// (readiness is faked), except those of --exec-image images, which run as real
// processes with real addresses when the agent can (podexec.go).
type nodeAgent struct {
	client kubernetes.Interface
	node   string
	queue  workqueue.TypedRateLimitingInterface[string]
	dir    string
	images execImages
	real   *realPods // nil: every pod is faked
	done   chan struct{}

	mu     sync.Mutex
	ips    map[string]string // pod UID → IP
	nextIP int
}

func newNodeAgent(client kubernetes.Interface, node, dir string, images execImages) *nodeAgent {
	return &nodeAgent{
		client: client,
		node:   node,
		dir:    dir,
		images: images,
		done:   make(chan struct{}),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		ips:    map[string]string{},
		nextIP: 2,
	}
}

func (a *nodeAgent) start(ctx context.Context) error {
	if err := a.registerNode(ctx); err != nil {
		return err
	}
	a.real = newRealPods(ctx, a.dir, a.images, func(key string) { a.queue.Add(key) })
	go every(ctx, 10*time.Second, a.renewLease)
	go every(ctx, 30*time.Second, a.heartbeat)

	factory := informers.NewSharedInformerFactory(a.client, 0)
	pods := factory.Core().V1().Pods()
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	_, _ = pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				a.queue.Add(key)
			}
		},
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	lister := pods.Lister()
	for i := 0; i < 4; i++ {
		go func() {
			for a.processNext(ctx, lister) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		a.queue.ShutDown()
		if a.real != nil {
			a.real.shutdown()
		}
		close(a.done)
	}()
	return nil
}

// wait blocks until the agent has stopped its real pods after ctx ended (at most 10 s).
func (a *nodeAgent) wait() {
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
	}
}

func every(ctx context.Context, every time.Duration, f func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *nodeAgent) registerNode(ctx context.Context) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: a.node,
			Labels: map[string]string{
				"kubernetes.io/hostname": a.node,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kube-local",
			},
		},
	}
	if _, err := a.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	a.heartbeat(ctx)
	return nil
}

func (a *nodeAgent) heartbeat(ctx context.Context) {
	node, err := a.client.CoreV1().Nodes().Get(ctx, a.node, metav1.GetOptions{})
	if err != nil {
		klog.ErrorS(err, "node heartbeat")
		return
	}
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("16"),
		corev1.ResourceMemory:           resource.MustParse("64Gi"),
		corev1.ResourcePods:             resource.MustParse("500"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	node.Status.Capacity = capacity
	node.Status.Allocatable = capacity
	node.Status.Phase = corev1.NodeRunning
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: a.node}}
	node.Status.NodeInfo.KubeletVersion = "v1.36.3-kube-local"
	node.Status.NodeInfo.OperatingSystem = "linux"
	node.Status.NodeInfo.Architecture = "amd64"
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	node.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
		cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated"),
	}
	if _, err := a.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		klog.ErrorS(err, "node status update")
	}
}

func (a *nodeAgent) renewLease(ctx context.Context) {
	leases := a.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	dur := int32(40)
	lease, err := leases.Get(ctx, a.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: a.node, Namespace: corev1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &a.node, LeaseDurationSeconds: &dur, RenewTime: &now},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	} else if err == nil {
		lease.Spec.RenewTime = &now
		lease.Spec.HolderIdentity = &a.node
		lease.Spec.LeaseDurationSeconds = &dur
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil && ctx.Err() == nil {
		klog.ErrorS(err, "node lease renew")
	}
}

func (a *nodeAgent) processNext(ctx context.Context, lister interface {
	Pods(string) corelisters.PodNamespaceLister
}) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		if a.real != nil {
			a.real.stopKey(key)
		}
		a.queue.Forget(key)
		return true
	}
	if err == nil {
		err = a.syncPod(ctx, pod.DeepCopy())
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		klog.V(2).InfoS("pod sync failed", "pod", key, "err", err)
		a.queue.AddRateLimited(key)
		return true
	}
	if apierrors.IsConflict(err) {
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	return true
}

func (a *nodeAgent) syncPod(ctx context.Context, pod *corev1.Pod) error {
	pods := a.client.CoreV1().Pods(pod.Namespace)
	if pod.DeletionTimestamp != nil {
		a.releaseIP(pod)
		if a.real != nil {
			a.real.stop(pod.UID)
		}
		if pod.Spec.NodeName == "" || pod.Spec.NodeName == a.node {
			zero := int64(0)
			return pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		}
		return nil
	}
	if pod.Spec.NodeName == "" {
		return pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: a.node},
		}, metav1.CreateOptions{})
	}
	if pod.Spec.NodeName != a.node {
		return nil
	}
	if c, _, _ := a.real.runnable(pod); c != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		return a.syncRealPod(ctx, pod)
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return nil
	case corev1.PodRunning:
		if isJobPod(pod) && time.Since(pod.Status.StartTime.Time) > time.Second {
			return a.completePod(ctx, pod)
		}
		if isJobPod(pod) {
			a.queue.AddAfter(pod.Namespace+"/"+pod.Name, time.Second)
		}
		return nil
	}
	return a.runPod(ctx, pod)
}

func isJobPod(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Job" {
			return true
		}
	}
	return false
}

func (a *nodeAgent) allocateIP(pod *corev1.Pod) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.ips[string(pod.UID)]; ok {
		return ip
	}
	used := map[string]bool{}
	for _, ip := range a.ips {
		used[ip] = true
	}
	for {
		n := a.nextIP
		a.nextIP++
		if a.nextIP > 250*250 {
			a.nextIP = 2
		}
		ip := fmt.Sprintf("10.244.%d.%d", n/250, n%250+2)
		if !used[ip] {
			a.ips[string(pod.UID)] = ip
			return ip
		}
	}
}

func (a *nodeAgent) releaseIP(pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.ips, string(pod.UID))
}

func (a *nodeAgent) runPod(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	ip := pod.Status.PodIP
	if ip == "" {
		ip = a.allocateIP(pod)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP = "10.0.0.1"
	pod.Status.HostIPs = []corev1.HostIP{{IP: "10.0.0.1"}}
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	pod.Status.StartTime = &now
	pod.Status.Conditions = podConditions(now, corev1.ConditionTrue)
	pod.Status.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	pod.Status.ContainerStatuses = nil
	started := true
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
			ContainerID: "kube-local://" + string(pod.UID) + "/" + c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	_, err := a.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

func (a *nodeAgent) completePod(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.Conditions = podConditions(now, corev1.ConditionFalse)
	started := false
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.Started = &started
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: pod.Status.StartTime.Rfc3339Copy(), FinishedAt: now}}
	}
	_, err := a.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	a.releaseIP(pod)
	return err
}

func podConditions(now metav1.Time, ready corev1.ConditionStatus) []corev1.PodCondition {
	c := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
	}
	return []corev1.PodCondition{
		c(corev1.PodScheduled, corev1.ConditionTrue),
		c(corev1.PodInitialized, corev1.ConditionTrue),
		c("PodReadyToStartContainers", corev1.ConditionTrue),
		c(corev1.ContainersReady, ready),
		c(corev1.PodReady, ready),
	}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// syncRealPod starts the pod's process if needed and reports it: Running with the pod's
// real address, Ready only while the readiness check answers, restarts counted.
func (a *nodeAgent) syncRealPod(ctx context.Context, pod *corev1.Pod) error {
	rp, err := a.real.ensure(pod)
	if err != nil {
		return err
	}
	st := rp.state()
	want := pod.DeepCopy()
	now := metav1.Now()
	ws := &want.Status
	ws.Phase = corev1.PodRunning
	ws.HostIP = "10.0.0.1"
	ws.HostIPs = []corev1.HostIP{{IP: "10.0.0.1"}}
	ws.PodIP = st.ip
	ws.PodIPs = []corev1.PodIP{{IP: st.ip}}
	if ws.StartTime == nil {
		ws.StartTime = &now
	}
	readyStatus := corev1.ConditionFalse
	if st.ready {
		readyStatus = corev1.ConditionTrue
	}
	conds := podConditions(now, readyStatus)
	for i := range conds {
		for _, old := range pod.Status.Conditions {
			if old.Type == conds[i].Type && old.Status == conds[i].Status {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	ws.Conditions = conds
	ws.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		started := true
		cs := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: &started,
			ContainerID: "kube-local://" + string(pod.UID) + "/" + c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metaTime(st.startedAt)}},
		}
		if c.Name == st.container {
			cs.Ready = st.ready
			cs.RestartCount = st.restarts
			if st.lastExit != nil {
				cs.LastTerminationState = corev1.ContainerState{Terminated: st.lastExit}
			}
			if !st.running {
				started = false
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off restarting the process"}}
			}
		}
		ws.ContainerStatuses = append(ws.ContainerStatuses, cs)
	}
	if apiequality.Semantic.DeepEqual(want.Status, pod.Status) {
		return nil
	}
	_, err = a.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, want, metav1.UpdateOptions{})
	return err
}
