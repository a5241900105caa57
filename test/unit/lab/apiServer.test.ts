// The lab API server's request reading and RBAC (lab/apiServer.ts): paths read as the API server's
// request-info resolver reads them, rules matched as RBAC matches them, and the rules a manifest's
// bindings give a ServiceAccount.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { allowedBy, clusterRulesFor, requestInfo } from '../../../lab/apiServer';

const guardYaml = () => parseAllDocuments(readFileSync(path.resolve(import.meta.dirname, '../../../deploy/guard.yaml'), 'utf8')).map((d) => d.toJS() as unknown);
const SA = { namespace: 'holdfast', name: 'holdfast-guard' };

describe('requestInfo', () => {
  it('reads lists, gets, watches and namespaces; discovery paths are non-resource', () => {
    expect(requestInfo('GET', '/api/v1/pods?limit=500')).toMatchObject({ verb: 'list', apiGroup: '', resource: 'pods', namespace: '', name: '' });
    expect(requestInfo('GET', '/apis/batch/v1/namespaces/site/cronjobs/nightly')).toMatchObject({ verb: 'get', apiGroup: 'batch', resource: 'cronjobs', namespace: 'site', name: 'nightly' });
    expect(requestInfo('GET', '/apis/apps/v1/deployments?watch=true')).toMatchObject({ verb: 'watch', apiGroup: 'apps', resource: 'deployments' });
    expect(requestInfo('DELETE', '/api/v1/namespaces/site/pods/p')).toMatchObject({ verb: 'delete', resource: 'pods' });
    for (const p of ['/api', '/apis', '/api/v1', '/apis/apps', '/apis/apps/v1', '/version']) expect(requestInfo('GET', p).resource, p).toBe('');
  });
});

describe('RBAC from deploy/guard.yaml', () => {
  it('its binding gives the guard ServiceAccount get, list and watch on the needs rule kinds, and nothing else', () => {
    const rules = clusterRulesFor(guardYaml(), SA);
    expect(allowedBy(rules, requestInfo('GET', '/api/v1/nodes'))).toBe(true);
    expect(allowedBy(rules, requestInfo('GET', '/apis/batch/v1/namespaces/x/jobs/j'))).toBe(true);
    expect(allowedBy(rules, requestInfo('GET', '/api/v1/secrets'))).toBe(false);
    expect(allowedBy(rules, requestInfo('GET', '/apis/apps/v1/pods'))).toBe(false);
    expect(allowedBy(rules, requestInfo('DELETE', '/api/v1/namespaces/x/pods/p'))).toBe(false);
    expect(clusterRulesFor(guardYaml(), { namespace: 'default', name: 'holdfast-guard' })).toEqual([]);
  });

  it('a rule left out of the ClusterRole is no longer granted', () => {
    const docs = guardYaml() as { kind: string; rules?: { resources: string[] }[] }[];
    const role = docs.find((d) => d.kind === 'ClusterRole')!;
    for (const r of role.rules!) r.resources = r.resources.filter((x) => x !== 'cronjobs');
    expect(allowedBy(clusterRulesFor(docs, SA), requestInfo('GET', '/apis/batch/v1/cronjobs'))).toBe(false);
  });
});
