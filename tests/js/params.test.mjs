// node --test tests/js: the room page's parameters panel (static/js/params.js): what it shows for
// each input (a nested path such as kube-scheduler's clientConnection.qps too) and what it sends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { paramAt, paramsFrom, placeholderFor } from "../../static/js/params.js";

const VIEW = {
  controllerManager: { nodeMonitorGracePeriod: 50, nodeEvictionRate: 0.1, kubeAPIQPS: 20 },
  apiServer: { defaultNotReadyTolerationSeconds: 300 },
  scheduler: { clientConnection: { qps: 50, burst: 100 } },
};

test("a setting is found by its path, a nested one too", () => {
  assert.deepEqual(paramAt(VIEW, "controllerManager.nodeEvictionRate"), { shown: true, value: 0.1 });
  assert.deepEqual(paramAt(VIEW, "scheduler.clientConnection.qps"), { shown: true, value: 50 });
  assert.deepEqual(paramAt(VIEW, "scheduler.clientConnection.burst"), { shown: true, value: 100 });
});

test("a setting the view leaves out is not shown (podEvictionTimeout after 1.27; no scheduler section)", () => {
  assert.deepEqual(paramAt(VIEW, "controllerManager.podEvictionTimeout"), { shown: false });
  const old = { controllerManager: VIEW.controllerManager };
  assert.deepEqual(paramAt(old, "scheduler.clientConnection.qps"), { shown: false });
  assert.deepEqual(paramAt({ scheduler: null }, "scheduler.clientConnection.qps"), { shown: false });
});

test("the greyed value: durations in seconds as 50s, numbers as they are", () => {
  assert.equal(placeholderFor(50, "s"), "50s");
  assert.equal(placeholderFor(50, undefined), "50");
  assert.equal(placeholderFor(0, undefined), "0");
  assert.equal(placeholderFor(null, "s"), "");
  assert.equal(placeholderFor(undefined, undefined), "");
});

test("what is sent: sections as SetParameters takes them, the scheduler's nested", () => {
  const sent = paramsFrom([
    ["controllerManager.nodeEvictionRate", "0.5"],
    ["controllerManager.nodeMonitorGracePeriod", "40"],
    ["apiServer.defaultNotReadyTolerationSeconds", ""],
    ["scheduler.clientConnection.qps", " 5 "],
    ["scheduler.clientConnection.burst", "10"],
  ]);
  assert.deepEqual(sent, {
    controllerManager: { nodeEvictionRate: 0.5, nodeMonitorGracePeriod: "40" },
    scheduler: { clientConnection: { qps: 5, burst: 10 } },
  });
});

test("a negative QPS is a number (no rate limiting); what is no number is sent as typed", () => {
  assert.deepEqual(paramsFrom([["scheduler.clientConnection.qps", "-1"]]), { scheduler: { clientConnection: { qps: -1 } } });
  assert.deepEqual(paramsFrom([["scheduler.clientConnection.burst", "lots"]]), { scheduler: { clientConnection: { burst: "lots" } } });
  assert.deepEqual(paramsFrom([["controllerManager.nodeEvictionRate", "1.2.3"]]), { controllerManager: { nodeEvictionRate: "1.2.3" } });
  assert.deepEqual(paramsFrom([["scheduler.clientConnection.qps", "  "]]), {});
});
