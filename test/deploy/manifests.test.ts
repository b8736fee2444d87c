/**
 * The deployment manifests say what docs/deploy.md says they do, checked offline (no container runtime,
 * compose or helm needed):
 *
 * - compose.yaml: PostgreSQL, three cluster-enabled Redis nodes and their create step, two `serve` replicas
 *   and a worker; every service has a health check and waits on what it needs with `service_healthy`; the
 *   env file exists; the image is this version's;
 * - Containerfile: three stages, production dependencies only, a non-root user, the data folder a volume
 *   named by `FRESHET_DATA_DIR`, a HEALTHCHECK;
 * - deploy/helm/freshet, rendered (test/deploy/helm-render.ts): serve and worker Deployments with liveness
 *   on /healthz and readiness on /readyz at the ports they listen on, a Service over the serve pods, the
 *   ConfigMap and Secret they read, resources set; the chart's version is this version; a missing store or
 *   secret stops the render with a message;
 * - deploy/systemd: the units run the installed command with the env file and signal the primary alone
 *   (`KillMode=mixed`);
 * - every health-check path of the three is a route the server answers 200 on, and the worker's health
 *   server too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveHealth } from '../../src/cli/health.js';
import { ROOT } from '../support/cli.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type Manifest, renderChart } from './helm-render.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const CHART = join(ROOT, 'deploy/helm/freshet');
const VALUES = {
  redis: { clusterNodes: 'redis-0:6379,redis-1:6379,redis-2:6379' },
  secrets: { serviceKey: 'k'.repeat(24), secret: 's'.repeat(24), databaseUrl: 'postgres://f:pw@pg:5432/freshet' },
};

interface ComposeService {
  image?: string;
  command?: string[] | string;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  env_file?: string[];
  volumes?: string[];
}

const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const containerfile = readFileSync(join(ROOT, 'Containerfile'), 'utf8');

/** The URL paths a health-check command asks for: each quoted string's closing `/<word>` (`…:8080/readyz'`). */
const pathsIn = (text: string): string[] => [...text.matchAll(/\/[a-z]+(?=\\?['"])/g)].map((m) => m[0]);

/** Every health-check path named by compose.yaml, the Containerfile and the chart. */
const named = new Set<string>();

describe('compose.yaml', () => {
  const s = compose.services;

  it('has PostgreSQL, three cluster-enabled Redis masters and the create step, two serve replicas and a worker', () => {
    expect(Object.keys(s).sort()).toEqual(
      ['postgres', 'redis-1', 'redis-2', 'redis-3', 'redis-cluster', 'serve-1', 'serve-2', 'worker'].sort(),
    );
    for (const n of ['redis-1', 'redis-2', 'redis-3']) expect(s[n]!.command).toContain('--cluster-enabled');
    expect(String(s['redis-cluster']!.command)).toMatch(
      /redis-cli --cluster create( \S+:6379){3}[\s\\]+--cluster-replicas 0/,
    );
    expect(s['serve-1']!.command).toEqual(['serve']);
    expect(s['serve-2']!.command).toEqual(['serve']);
    expect(s.worker!.command).toEqual(['worker', 'fanout', '--health-port', '8080']);
    for (const n of ['serve-1', 'serve-2', 'worker']) {
      expect(s[n]!.image).toBe(`freshet:${pkg.version}`);
      for (const f of s[n]!.env_file!) expect(existsSync(join(ROOT, f)), f).toBe(true);
    }
    const env = readFileSync(join(ROOT, 'deploy/compose/freshet.env'), 'utf8');
    expect(env).toMatch(/^FRESHET_REDIS_CLUSTER_NODES=(\d+\.\d+\.\d+\.\d+:6379,?){3}$/m);
  });

  it('every service has a health check, and waits for what it needs to be healthy', () => {
    for (const [name, svc] of Object.entries(s)) {
      expect(svc.healthcheck?.test, name).toBeDefined();
      for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
        expect(Object.keys(s), `${name} → ${dep}`).toContain(dep);
        expect(condition, `${name} → ${dep}`).toBe('service_healthy');
      }
      for (const v of svc.volumes ?? []) expect(Object.keys(compose.volumes)).toContain(v.split(':')[0]);
    }
    for (const n of ['serve-1', 'serve-2', 'worker']) {
      expect(Object.keys(s[n]!.depends_on!).sort(), n).toEqual(['postgres', 'redis-cluster']);
      const paths = pathsIn(JSON.stringify(s[n]!.healthcheck!.test));
      expect(paths, n).toEqual(['/readyz']);
      for (const p of paths) named.add(p);
    }
    expect(Object.keys(s['redis-cluster']!.depends_on!).sort()).toEqual(['redis-1', 'redis-2', 'redis-3']);
    expect(JSON.stringify(s['redis-cluster']!.healthcheck)).toContain('cluster_state:ok');
  });
});

describe('Containerfile', () => {
  it('builds in stages, installs production dependencies only, runs as a non-root user with a data volume', () => {
    expect(containerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(3);
    expect(containerfile).toMatch(/^RUN npm install --omit=dev\b/m);
    const user = /^USER (\S+)/m.exec(containerfile)![1]!;
    expect(user.split(':')[0]).not.toMatch(/^(0|root)$/);
    expect(containerfile).toMatch(/^VOLUME \["\/data"\]/m);
    expect(containerfile).toMatch(/FRESHET_DATA_DIR=\/data/);
    const healthcheck = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(containerfile)![1]!;
    const paths = pathsIn(healthcheck);
    expect(paths).toEqual(['/readyz']);
    for (const p of paths) named.add(p);
  });
});

describe('the Helm chart', () => {
  const manifests: Manifest[] = renderChart(CHART, VALUES);
  const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
  const deployment = (component: string) =>
    byKind('Deployment').find((d) => d.doc.metadata.labels['app.kubernetes.io/component'] === component)!.doc;

  it('renders serve and worker Deployments, a Service, a ConfigMap, a Secret and a disruption budget', () => {
    expect(manifests.map((m) => `${m.kind}/${m.name}`).sort()).toEqual(
      [
        'ConfigMap/freshet-config',
        'Deployment/freshet-serve',
        'Deployment/freshet-worker',
        'PodDisruptionBudget/freshet-serve',
        'Secret/freshet-secrets',
        'Service/freshet',
      ].sort(),
    );
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    expect([chart.version, chart.appVersion]).toEqual([pkg.version, pkg.version]);
    const config = byKind('ConfigMap')[0]!.doc.data;
    expect(config).toMatchObject({
      HOST: '0.0.0.0',
      PORT: '8080',
      FRESHET_REDIS_CLUSTER_NODES: VALUES.redis.clusterNodes,
    });
    expect(byKind('Secret')[0]!.doc.stringData).toEqual({
      FRESHET_SERVICE_KEY: VALUES.secrets.serviceKey,
      FRESHET_SECRET: VALUES.secrets.secret,
      FRESHET_DATABASE_URL: VALUES.secrets.databaseUrl,
    });
    const service = byKind('Service')[0]!.doc.spec;
    expect(service.selector['app.kubernetes.io/component']).toBe('serve');
    expect(service.ports[0].targetPort).toBe('http');
  });

  it('probes liveness on /healthz and readiness on /readyz at the port each container listens on', () => {
    for (const [component, args] of [
      ['serve', ['serve']],
      ['worker', ['worker', 'fanout', '--health-port', '8080']],
    ] as const) {
      const pod = deployment(component).spec.template.spec;
      const c = pod.containers[0];
      expect(c.args).toEqual(args);
      const port = c.ports[0];
      expect(port.containerPort).toBe(8080); // PORT (serve) or --health-port (worker)
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: port.name });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: port.name });
      named.add(c.livenessProbe.httpGet.path).add(c.readinessProbe.httpGet.path);
      expect(c.resources.requests.memory, component).toBeDefined();
      expect(c.resources.limits.memory, component).toBeDefined();
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
      expect(c.envFrom.map((e: Record<string, { name: string }>) => Object.values(e)[0]!.name).sort()).toEqual([
        'freshet-config',
        'freshet-secrets',
      ]);
    }
    expect(deployment('serve').spec.template.spec.containers[0].env).toEqual([{ name: 'FRESHET_WORKERS', value: '2' }]);
  });

  it('stops with a message when a store or a secret is missing; an existing Secret replaces its own', () => {
    expect(() => renderChart(CHART, { secrets: VALUES.secrets })).toThrow(/redis\.clusterNodes or redis\.url/);
    expect(() => renderChart(CHART, { redis: VALUES.redis })).toThrow(/secrets\.serviceKey/);
    const own = renderChart(CHART, { redis: { url: 'redis://r:6379' }, secrets: { existingSecret: 'mine' } });
    expect(own.map((m) => m.kind)).not.toContain('Secret');
    expect(own.find((m) => m.kind === 'ConfigMap')!.doc.data.FRESHET_REDIS_URL).toBe('redis://r:6379');
    const serve = own.find((m) => m.kind === 'Deployment' && m.name === 'freshet-serve')!.doc.spec.template.spec
      .containers[0];
    expect(serve.envFrom[1]).toEqual({ secretRef: { name: 'mine' } });
  });
});

describe('the systemd units', () => {
  it('run the installed command (not npx), read the env file, and signal the primary alone', () => {
    for (const [unit, args] of [
      ['freshet.service', 'serve'],
      ['freshet-worker.service', 'worker fanout --health-port 8090'],
    ] as const) {
      const text = readFileSync(join(ROOT, 'deploy/systemd', unit), 'utf8');
      expect(text).toMatch(new RegExp(`^ExecStart=/usr/bin/node \\S+/freshet-engine/bin/freshet\\.js ${args}$`, 'm'));
      expect(text).not.toMatch(/npx/);
      expect(text).toMatch(/^EnvironmentFile=\/etc\/freshet\/freshet\.env$/m);
      // a SIGTERM to every process of the unit reaches each worker twice: it exits 1 at the second
      expect(text, unit).toMatch(/^KillMode=mixed$/m);
      expect(text).toMatch(/^User=freshet$/m);
      expect(text).toMatch(/^ReadWritePaths=\/var\/lib\/freshet$/m);
    }
    const env = readFileSync(join(ROOT, 'deploy/systemd/freshet.env'), 'utf8');
    for (const name of ['FRESHET_SERVICE_KEY', 'FRESHET_SECRET', 'FRESHET_DATABASE_URL', 'HOST'])
      expect(env).toMatch(new RegExp(`^${name}=`, 'm'));
  });
});

describe('the health checks name real routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('the server and the worker answer 200 on every path compose.yaml, the Containerfile and the chart probe', async () => {
    expect([...named].sort()).toEqual(['/healthz', '/readyz']);
    const health = await serveHealth({ ready: async () => ({ postgres: true, redis: true }) }, '127.0.0.1', 0);
    try {
      for (const path of named) {
        expect((await t.app.inject({ method: 'GET', url: path })).statusCode, `server ${path}`).toBe(200);
        expect((await fetch(`${health.url}${path}`)).status, `worker ${path}`).toBe(200);
      }
    } finally {
      await health.close();
    }
  });
});
