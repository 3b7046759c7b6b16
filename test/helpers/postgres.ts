/**
 * A real PostgreSQL server for a test file: `initdb -A trust` in a temporary directory, `pg_ctl
 * start` on a free 127.0.0.1 port (socket in the same directory), stopped with `pg_ctl -m
 * immediate stop`. The programs come from `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/<version>/bin. As root the server runs as the `postgres` user (PostgreSQL
 * refuses root), via `runuser -u postgres --`, in a directory that user owns.
 *
 * A test file takes one with `postgresForFile`: whether this machine has PostgreSQL goes through
 * the require-tool helper's `prerequisite` (its NOTICE, or a failure under GRIDSYNC_REQUIRE_TOOLS=1),
 * and the server runs from the file's first test to its last.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { prerequisite } from './require-tool.js';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  readonly port: number;
  /** A fresh database on this server (each test file or test can have its own). */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement as the superuser (pg_terminate_backend, SHOW …). */
  admin<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Stop (immediate: like a crash) and start again on the same port and data, after `downMs`. */
  restart(downMs?: number): Promise<void>;
  /**
   * SIGSTOP (true) or SIGCONT (false) to every process of the server, postmaster and backends: its
   * sockets stay open and nothing answers, as a host frozen by its hypervisor or swap.
   */
  freeze(frozen: boolean): void;
  stop(): Promise<void>;
}

/** The postmaster (first line of postmaster.pid) and every process it started; none when it is not running. */
function serverPids(data: string): number[] {
  const pidFile = path.join(data, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return [];
  const postmaster = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  const children = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // The parent pid is the 4th field after the parenthesised command name.
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

/** The folder holding initdb, pg_ctl and postgres, or undefined. */
/** One statement on a connection of its own to the database at `url` (a test's tampering, its checks): the rows. */
export async function queryIn<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

export function postgresBinDir(): string | undefined {
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [fromConfig.status === 0 ? fromConfig.stdout.trim() : ''];
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs
      .readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(root, v, 'bin')));
  }
  return candidates.find((d) => d && fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'pg_ctl')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface PostgresOptions {
  /** The server's max_connections (50 by default). */
  readonly maxConnections?: number;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (check postgresBinDir() first)');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    fs.chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]): void => {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const start = (): void =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=${options.maxConnections ?? 50}`,
      '-w',
      'start',
    ]);
  const signalAll = (signal: NodeJS.Signals): void => {
    for (const pid of serverPids(data)) {
      try {
        process.kill(pid, signal);
      } catch {
        // A backend that ended meanwhile.
      }
    }
  };
  // A frozen server acts on pg_ctl's signal only once woken.
  const stop = (): void => {
    signalAll('SIGCONT');
    run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = <T>(sql: string, params: unknown[] = []): Promise<T[]> => queryIn<T>(url, sql, params);
  let stopped = false;
  return {
    url,
    port,
    admin,
    async createDatabase(name) {
      await admin(`CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    freeze(frozen) {
      signalAll(frozen ? 'SIGSTOP' : 'SIGCONT');
    },
    async restart(downMs = 0) {
      stop();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        stop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Whether this machine has PostgreSQL, through the require-tool helper's `prerequisite`, for a file
 * whose tests each start a server of their own (`startPostgres`, stopped with the test) so that they
 * can run side by side: tests that freeze or restart the server cannot share one.
 */
export function postgresAvailable(unchecked: string): boolean {
  return prerequisite('PostgreSQL (initdb, pg_ctl)', postgresBinDir() !== undefined, unchecked);
}

/**
 * The test file's own PostgreSQL server, started before its first test and stopped after its last,
 * when this machine has PostgreSQL; `unchecked` says what goes untested without it. Skip the
 * file's suites with `describe.skipIf(!server.available)`; use the server inside tests only.
 */
export function postgresForFile(unchecked: string, options: PostgresOptions = {}): PostgresServer & { readonly available: boolean } {
  const available = postgresAvailable(unchecked);
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    if (available) server = await startPostgres(options);
  });
  afterAll(async () => server?.stop());
  const running = (): PostgresServer => {
    if (!server) throw new Error('no PostgreSQL server: this file has none, or it is used outside a test');
    return server;
  };
  return {
    available,
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    createDatabase: (name) => running().createDatabase(name),
    admin: (sql, params) => running().admin(sql, params),
    restart: (downMs) => running().restart(downMs),
    freeze: (frozen) => running().freeze(frozen),
    stop: async () => server?.stop(),
  };
}
