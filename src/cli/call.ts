/** `gridsync call METHOD PATH [JSON]`: one raw REST call through the client; prints `data`. `--soap OPERATION [JSON]`: one SOAP 4.1 call. */
import fs from 'node:fs';
import { ZodError } from 'zod';
import { ALL_ENDPOINTS, GridApiError, GridClient, GridError, serviceUrlProblem, SoapClient, SoapFaultError } from '../api/index.js';
import { ALL_OPERATIONS, operationByName } from '@gridsync/protocol/soap';
import { ConfigSchema } from '../config/index.js';
import { connectService, type ServiceConfig, type ServiceConnection } from '../service/index.js';
import { parseCommand, runCommand, usageProblem, UsageError } from './args.js';
import { loadConfigWarning } from './common.js';
import { print, printError } from './print.js';

const USAGE = `usage: gridsync call METHOD PATH [JSON] [-c FILE | --base-url URL --api-key-file FILE]
       gridsync call --soap OPERATION [JSON] [-c FILE | --base-url URL --api-key-file FILE]
       gridsync call --list | --soap --list

One REST call through the client (auth, retry, envelope). Prints the response's data as JSON; on an
error prints errorCode, message and gridsync's code ([GRID_API_ERROR]) to stderr and exits 1; a
setting the client refuses exits 2 ([GRID_CONFIG_ERROR]). Credentials come from -c FILE, from
--base-url with --api-key-file FILE (or GRIDSYNC_API_KEY_FILE), or from GRIDSYNC_API_BASE_URL /
GRIDSYNC_API_KEY. --api-key KEY still works but every user sees it in ps: gridsync warns.
--allow-insecure-http: plain http:// to a host that is not loopback, as api.allowInsecureHttp does
in a config. A GET's JSON becomes the query string. Example: gridsync call POST /v2/parcels/pending-inbox-list '{"mailboxId":1001}'

With --soap, one operation of the SOAP 4.1 interface: JSON holds its parameters by element name
(SessionID is filled in from the API key or a Login); the result prints as JSON with element names
as keys and 64-bit ids as strings. Example: gridsync call --soap ParcelInBox '{}'`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(
      argv,
      USAGE,
      {
        config: { type: 'string', short: 'c' },
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        'api-key-file': { type: 'string' },
        list: { type: 'boolean' },
        soap: { type: 'boolean' },
        'allow-insecure-http': { type: 'boolean' },
      },
      true,
    );
    if (!args) return 0;
    if (args.values.list && args.values.soap) {
      for (const o of ALL_OPERATIONS)
        print(
          `${o.name.padEnd(28)} ${o.params
            .map((p) => `${p.name}:${p.type}`)
            .join(', ')
            .padEnd(60)} → ${o.result.type}  ${o.doc}\n`,
        );
      return 0;
    }
    if (args.values.list) {
      for (const e of ALL_ENDPOINTS) print(`${e.method.padEnd(6)} ${e.path.padEnd(48)} ${e.name.padEnd(32)} ${e.summary}\n`);
      return 0;
    }
    const soap = args.values.soap === true;
    const [method, p, json] = soap ? [undefined, args.positionals[0], args.positionals[1]] : args.positionals;
    if (soap) {
      if (!p) throw usageProblem('name a SOAP operation (or --list)', USAGE);
      if (args.positionals.length > 2) throw usageProblem(`unexpected argument ${args.positionals.slice(2).join(' ')}`, USAGE);
      if (!operationByName(p)) throw new UsageError(`unknown SOAP operation ${p}; gridsync call --soap --list shows them`);
    } else {
      if (!method || !p) throw usageProblem('name a METHOD and a PATH (or --list)', USAGE);
      if (args.positionals.length > 3) throw usageProblem(`unexpected argument ${args.positionals.slice(3).join(' ')}`, USAGE);
      if (!/^(GET|POST|PUT|DELETE)$/i.test(method)) throw new UsageError(`METHOD must be GET, POST, PUT or DELETE, not ${method}`);
      if (!p.startsWith('/')) throw new UsageError(`PATH must start with /, such as /v2/users/me, not ${p}`);
    }
    let body: unknown;
    if (json !== undefined) {
      try {
        body = JSON.parse(json);
      } catch {
        throw new UsageError(`JSON argument is not valid JSON: ${json}`);
      }
    }
    let baseUrl = args.values['base-url'] ?? process.env.GRIDSYNC_API_BASE_URL;
    if (args.values['api-key'] !== undefined)
      printError(
        'gridsync: warning: --api-key is visible to every user of this machine (ps, /proc); use --api-key-file FILE or GRIDSYNC_API_KEY instead\n',
      );
    const keyFile = args.values['api-key-file'] ?? process.env.GRIDSYNC_API_KEY_FILE;
    let fileKey: string | undefined;
    if (keyFile !== undefined) {
      try {
        fileKey = fs.readFileSync(keyFile, 'utf8').trim();
      } catch (err) {
        throw new UsageError(`--api-key-file ${keyFile}: ${(err as Error).message}`);
      }
      if (!fileKey) throw new UsageError(`--api-key-file ${keyFile} is empty`);
    }
    let apiKey = args.values['api-key'] ?? fileKey ?? process.env.GRIDSYNC_API_KEY;
    let login: { login: string; password: string } | undefined;
    let allowInsecureHttp = args.values['allow-insecure-http'] ?? false;
    let cfg: ServiceConfig | undefined;
    if (args.values.config) {
      cfg = loadConfigWarning(args.values.config).config;
      baseUrl ??= cfg.api.baseUrl;
      apiKey ??= cfg.api.apiKey;
      if (cfg.api.login && cfg.api.password) login = { login: cfg.api.login, password: cfg.api.password };
      allowInsecureHttp ||= cfg.api.allowInsecureHttp;
    }
    if (!baseUrl) throw new UsageError('no service: give -c FILE, --base-url, or GRIDSYNC_API_BASE_URL');
    if (!apiKey && !login) throw new UsageError('no credentials: give -c FILE, --api-key-file FILE, or GRIDSYNC_API_KEY');
    if (baseUrl === 'embedded' && !cfg)
      throw new UsageError('baseUrl embedded needs -c FILE (the emulator keeps its state in the stateDir)');
    if (!cfg && URL.canParse(baseUrl)) {
      // The client's refusal names the config key; without a config the switch is this command's flag.
      const url = new URL(baseUrl);
      const problem = serviceUrlProblem(url, allowInsecureHttp);
      if (problem && !serviceUrlProblem(url, true)) throw new UsageError(`${problem}; without -c FILE: --allow-insecure-http`);
    }
    const credentials = apiKey ? { apiKey } : { login: login?.login, password: login?.password };
    let service: ServiceConnection;
    try {
      const api = ConfigSchema.shape.api.parse({ ...cfg?.api, baseUrl, ...credentials, allowInsecureHttp });
      service = await connectService(
        { api, emulator: cfg?.emulator ?? ConfigSchema.shape.emulator.parse({}), stateDir: cfg?.stateDir ?? '.' },
        { protocol: soap ? 'soap' : 'rest' },
      );
    } catch (err) {
      if (err instanceof ZodError) throw new UsageError(err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      // A client's refusal (GRID_CONFIG_ERROR) goes out with its code and the table's exit, not as CLI_USAGE.
      throw err;
    }
    if (service.soap) return callSoap(service, p, body);
    const client = service.rest as GridClient;
    try {
      let target = p;
      if ((method as string).toUpperCase() === 'GET' && body && typeof body === 'object') {
        const qs = new URLSearchParams(
          Object.entries(body as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString();
        target = `${p}${p.includes('?') ? '&' : '?'}${qs}`;
        body = undefined;
      }
      const data = await client.callRaw(method as string, target, body, {
        onShapeMismatch: (field, detail) => printError(`warning: the answer does not match the documented shape at ${field}: ${detail}\n`),
      });
      print(`${JSON.stringify(data, null, 2)}\n`);
      return 0;
    } catch (err) {
      if (err instanceof GridApiError)
        printError(`${err.errorCode ?? `HTTP ${err.httpStatus}`}: ${err.serviceMessage || err.message} [${err.code}]\n`);
      else if (err instanceof GridError) printError(`${err.code}: ${err.message}\n`);
      else throw err;
      return 1;
    } finally {
      await service.close();
    }
  });
}

async function callSoap(service: ServiceConnection, operation: string, params: unknown): Promise<number> {
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    await service.close();
    throw new UsageError('the JSON argument of --soap must be an object of parameters by element name');
  }
  const client = service.soap as SoapClient;
  try {
    const result = await client.call(operation, (params ?? {}) as Record<string, unknown>);
    // WhoAmI and the session logs echo the session id, which may be the API key itself.
    print(
      `${JSON.stringify(result, (key, value: unknown) => (key === 'SessionID' && typeof value === 'string' ? '(redacted)' : value), 2)}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof SoapFaultError)
      printError(
        `soap:${err.faultCode} ${err.soapErrorCode}${err.errorItem ? ` (${err.errorItem})` : ''}: ${err.serviceMessage} [${err.code}]\n`,
      );
    else if (err instanceof GridApiError) printError(`HTTP ${err.httpStatus}: ${err.serviceMessage || err.message} [${err.code}]\n`);
    else if (err instanceof GridError) printError(`${err.code}: ${err.message}\n`);
    else throw err;
    return 1;
  } finally {
    await service.close();
  }
}
