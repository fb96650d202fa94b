// The demo app of the test bed's data plane: what a canary release ships. kube-local's node
// agent runs it as a real process for pods of image `sluice.dev/demo-app:<tag>` (one network
// namespace and address per pod), passing the tag as $DEMO_VERSION and the first
// containerPort as $PORT. Runs standalone too: `DEMO_VERSION=v1-slow node server.mjs`.
//
//   GET /         → 200 "<version>\n" with header x-demo-version (behaviour below)
//   GET /healthz  → 200 "ok" (readiness; not recorded as traffic, so probes do not dilute rates)
//   :$METRICS_PORT/metrics (default 9464) → Prometheus text from the OpenTelemetry SDK
//
// Behaviour from the tag: one containing `erroring` answers 20% of requests with 500; one
// containing `slow` makes 10% of requests take 250–350 ms, so its p99 is 5× the good one's
// or more even on a busy machine (good: 10–20 ms with jitter; as the histogram buckets of the
// semantic conventions see it, good p99 ≤ 0.05 s, slow p99 ≈ 0.47 s); otherwise good.
// Both words combine.
//
// Metrics follow the OpenTelemetry HTTP semantic conventions, so Sluice's built-in OTel
// queries work unchanged: histogram `http.server.request.duration` (seconds; attributes
// http.request.method, http.response.status_code, http.route) on a resource with
// service.name=demo-app and service.version=$DEMO_VERSION. The Prometheus exporter turns
// them into `http_server_request_duration_seconds_{bucket,sum,count}` and `target_info`.
import { createServer } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  METRIC_HTTP_SERVER_REQUEST_DURATION,
} from '@opentelemetry/semantic-conventions';

const version = process.env.DEMO_VERSION || 'dev';
const port = Number(process.env.PORT || 8080);
const metricsPort = Number(process.env.METRICS_PORT || 9464);
const errorShare = version.includes('erroring') ? 0.2 : 0;
const slowShare = version.includes('slow') ? 0.1 : 0;

const exporter = new PrometheusExporter({ port: metricsPort, endpoint: '/metrics' });
const provider = new MeterProvider({
  resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'demo-app', [ATTR_SERVICE_VERSION]: version }),
  readers: [exporter],
});
metrics.setGlobalMeterProvider(provider);
const duration = metrics
  .getMeter('sluice-demo-app', '1.0.0')
  .createHistogram(METRIC_HTTP_SERVER_REQUEST_DURATION, {
    unit: 's',
    description: 'Duration of HTTP server requests.',
    // The semantic conventions' recommended boundaries (the SDK default is meant for ms).
    advice: {
      explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    },
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = createServer(async (req, res) => {
  const start = process.hrtime.bigint();
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    return;
  }
  let status = 404;
  let route;
  if (path === '/') {
    route = '/';
    await sleep(Math.random() < slowShare ? 250 + Math.random() * 100 : 10 + Math.random() * 10);
    status = Math.random() < errorShare ? 500 : 200;
  }
  res.writeHead(status, { 'content-type': 'text/plain', 'x-demo-version': version });
  res.end(status === 200 ? `${version}\n` : status === 500 ? `${version}: injected error\n` : 'not found\n');
  const attrs = { [ATTR_HTTP_REQUEST_METHOD]: req.method ?? 'GET', [ATTR_HTTP_RESPONSE_STATUS_CODE]: status };
  if (route) attrs[ATTR_HTTP_ROUTE] = route;
  duration.record(Number(process.hrtime.bigint() - start) / 1e9, attrs);
});
server.keepAliveTimeout = 30_000;
server.listen(port, () =>
  console.log(`demo-app ${version} listening on :${port}, metrics on :${metricsPort}/metrics`),
);

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections();
    void provider.shutdown().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
