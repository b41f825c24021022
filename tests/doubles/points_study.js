#!/usr/bin/env node
// A study in JavaScript, written from the contract alone (docs/contract.md), that drives its runs through
// $STUDYMON_RUNTIME: two rounds, each a diagnosis run settled and an ablation run, then the halt.
//
// Every record is written only if the ledger does not hold it yet, so a resume goes on where the ledger
// stops: a run charged but not started is started, never charged again; a container started before its
// runStarted is adopted; a run in flight is waited for in its container; a result not settled is settled
// once.  Between its steps it pauses (`pause` seconds), as a study doing real work would, so that a kill
// point can land between any two of them.
//
// `fault` in its template (or `faults`, by study id) makes it get one of those recoveries wrong, each at its own
// point (contract §7):
//   recharge            a run charged but not started is charged again     (after:charge)
//   restart-unrecorded  a container without runStarted is removed, run anew (container:start)
//   settle-twice        a result not settled is settled twice              (after:runResult/diagnosis)
//   forget-finished     a run whose container exited before the resume is run again (container:die)
//   abandon-ablation    an ablation run in flight is given up              (after:runStarted/ablation)
//   rerun-unsettled     a diagnosis result not settled is measured again   (after:runResult/diagnosis)
// and one that is no mistake: `one-write` writes each result in one write with the record after it, so that no
// reader ever sees the ledger end at a result (a kill at after:runResult is always missed).
// Killed anywhere else, each recovers as the honest study does.
'use strict';

const fs = require('fs');
const { execFileSync } = require('child_process');

const args = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(args[args.indexOf('--config') + 1], 'utf8'));
const dir = args[args.indexOf('--dir') + 1];
const resuming = args.includes('--resume');
const fault = (config.faults || {})[process.env.STUDYMON_STUDY] || config.fault || 'honest';
const pause = config.pause ?? 0.4;
const runSeconds = config.runSeconds ?? 1;
const image = config.image || 'studymon/refstudy:1';
const id = process.env.STUDYMON_STUDY;
const rt = process.env.STUDYMON_RUNTIME.split(' ');
const prefix = `${config.containerPrefix || 'inforsi'}-${id}-`;
const COST = 10;
const BUDGET = 4 * COST;

process.on('SIGINT', () => process.exit(130));
fs.mkdirSync(dir, { recursive: true });
const ledger = `${dir}/ledger.jsonl`;
const records = fs.existsSync(ledger)
  ? fs.readFileSync(ledger, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
  : [];
const before = records.slice(); // what the controllers before this one wrote
const began = Date.now();
const last = before[before.length - 1];

function sleep(seconds) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
}

function runtime(...words) {
  return execFileSync(rt[0], [...rt.slice(1), ...words], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function inspect(name) {
  try {
    return JSON.parse(runtime('inspect', name))[0] || null;
  } catch (err) {
    return null; // no such container: exit 1
  }
}

function matches(record, kind, fields) {
  return record.kind === kind && Object.entries(fields).every(([k, v]) => record.content[k] === v);
}

function find(kind, fields, among = records) {
  return among.find((r) => matches(r, kind, fields));
}

let held = ''; // one-write: a result held back, written with the record after it

function write(kind, content) {
  const record = { seq: records.length + 1, at: new Date().toISOString(), kind, content };
  records.push(record);
  if (fault === 'one-write' && kind === 'runResult') {
    held = JSON.stringify(record) + '\n';
    return;
  }
  fs.appendFileSync(ledger, held + JSON.stringify(record) + '\n'); // one write: a record (and one held back)
  held = '';
  sleep(pause);
}

function put(kind, content, fields) {
  if (!find(kind, fields)) write(kind, content);
}

function balance() {
  const charges = records.filter((r) => r.kind === 'charge');
  return charges.length ? charges[charges.length - 1].content.balance : BUDGET;
}

// Studies listed in `longFirstRun` (ids, or "*" for every study: a campaign's trials) run d1 for
// `longFirstRun.seconds` (default 8): long enough to outlast a resume on a loaded machine.
const long = config.longFirstRun || {};
const longFirst = long.ids === '*' || (long.ids || []).includes(id);

function start(run, name) {
  const seconds = run === 'd1' && longFirst ? (long.seconds ?? 8) : runSeconds;
  runtime('run', '-d', '--name', name, '--label', `studymon.study=${id}`, '--label', `studymon.run=${run}`,
    image, 'sh', '-c', `sleep ${seconds}; echo 0.75`);
}

function execute(run, purpose, round) {
  const name = prefix + run;
  const inFlightBefore = find('runStarted', { run }, before) && !find('runResult', { run }, before);
  put('runPlanned', { run, purpose, object: 'cell-1', round, experiments: [`e${round}`] }, { run });
  const charged = find('charge', { run });
  if (!charged || (fault === 'recharge' && resuming && !find('runStarted', { run }) && find('charge', { run }, before)
                   && records.filter((r) => matches(r, 'charge', { run })).length === 1)) {
    write('charge', { run, amount: COST, balance: balance() - COST });
  }
  if (!find('runStarted', { run })) {
    const there = inspect(name);
    const ran = there !== null && there.State.Status !== 'created';
    if (there !== null && (!ran || fault === 'restart-unrecorded')) runtime('rm', '-f', name);
    if (!ran || fault === 'restart-unrecorded') start(run, name);
    sleep(pause); // between the container's start and its runStarted
    write('runStarted', { run, container: name });
  }
  if (find('runResult', { run })) return;
  if (inFlightBefore && purpose === 'ablation' && fault === 'abandon-ablation') return; // its result is never written
  const state = inFlightBefore && fault === 'forget-finished' ? inspect(name).State : null;
  if (state && !state.Running && Date.parse(state.FinishedAt) < began) { // it ended before this controller began
    runtime('rm', '-f', name); // "it had ended without its result: run it again"
    start(run, name);
  }
  const code = Number(runtime('wait', name));
  sleep(pause); // between the container's exit and the result
  const value = Number(runtime('logs', name).split('\n').pop());
  write('runResult', { run, exitCode: code, outputs: { [`e${round}`]: value } });
}

function settle(round) {
  const run = `d${round}`;
  const content = { round, run, dropped: [], judged: { experiments: [{ id: `e${round}`, verdict: 'kept', score: 0.75 }] } };
  const cut = resuming && last && matches(last, 'runResult', { run }); // killed between the result and this
  if (fault === 'rerun-unsettled' && cut) {
    runtime('rm', '-f', prefix + run); // "a result nobody settled: measure it again"
    start(run, prefix + run);
    runtime('wait', prefix + run);
  }
  if (fault === 'settle-twice' && cut) {
    write('diagnosisSettlement', content); // the settlement the crash cut off, recovered...
    write('diagnosisSettlement', content); // ...and the one of the usual path, written without looking
    return;
  }
  put('diagnosisSettlement', content, { round });
}

put('studyOpen', { study: id, budget: BUDGET, config: {} }, { study: id });
for (const round of [1, 2]) {
  put('stageOpen', { stage: 'diagnosis', round }, { stage: 'diagnosis', round });
  put('decision', { name: 'selectDiagnosis', round, output: { chosen: [`e${round}`] } }, { name: 'selectDiagnosis', round });
  execute(`d${round}`, 'diagnosis', round);
  settle(round);
  put('stageOpen', { stage: 'proposal', round }, { stage: 'proposal', round });
  put('stageOpen', { stage: 'ablation', round }, { stage: 'ablation', round });
  execute(`a${round}`, 'ablation', round);
}
put('halt', { reason: 'balance exhausted' }, {});
for (const run of ['d1', 'a1', 'd2', 'a2']) {
  try {
    runtime('rm', '-f', prefix + run);
  } catch (err) {
    // gone already
  }
}
