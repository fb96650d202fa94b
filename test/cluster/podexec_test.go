package main

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestExecImages(t *testing.T) {
	m, err := parseExecImages([]string{"sluice.dev/demo-app=node /r/server.mjs --x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		image, tag string
		run        bool
	}{
		{"sluice.dev/demo-app:v2-erroring", "v2-erroring", true},
		{"sluice.dev/demo-app", "", false},               // no tag
		{"sluice.dev/other:v1", "", false},               // another repository
		{"registry:5000/sluice.dev/demo-app", "", false}, // a port is not a tag
	} {
		argv, tag := m.match(tc.image)
		if (argv != nil) != tc.run || tag != tc.tag {
			t.Errorf("match(%q) = %v, %q; want run=%v tag %q", tc.image, argv, tag, tc.run, tc.tag)
		}
	}
	for _, bad := range []string{"nocommand", "=node x", "repo=", "repo=  "} {
		if _, err := parseExecImages([]string{bad}); err == nil {
			t.Errorf("parseExecImages(%q): want an error", bad)
		}
	}
}

func TestContainerEnv(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"version": "v2"}}}
	c := &corev1.Container{
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8081}, {Name: "metrics", ContainerPort: 9464}},
		Env: []corev1.EnvVar{
			{Name: "A", Value: "1"},
			{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "V", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['version']"}}},
			{Name: "PORT", Value: "9000"}, // the container's own value wins
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}},
	}
	env, probe := containerEnv(pod, c, "v2-slow", "10.250.1.5")
	for _, want := range []string{"DEMO_VERSION=v2-slow", "POD_NAME=p", "POD_IP=10.250.1.5", "METRICS_PORT=9464", "A=1", "NS=ns", "V=v2"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
	if i, j := slices.Index(env, "PORT=8081"), slices.Index(env, "PORT=9000"); i < 0 || j < i {
		t.Errorf("want PORT=8081 then the container's PORT=9000 (last wins): %v", env)
	}
	if probe != "http://10.250.1.5:8081/ready" {
		t.Errorf("probe = %s", probe)
	}
	c.ReadinessProbe = nil
	if _, probe = containerEnv(pod, c, "v1", "10.250.1.5"); probe != "http://10.250.1.5:8081/healthz" {
		t.Errorf("default probe = %s", probe)
	}
}
