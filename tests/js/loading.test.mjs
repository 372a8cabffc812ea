// What the page tells the engine of its WebGPU adapter (web/lib/loading.js): the engine's device asks
// for `subgroups`, which wgpu's web backend does not request, exactly where the adapter offers them
// and the WGSL compiler has `subgroup_id`; other devices are asked for what they asked for. A
// stand-in for navigator.gpu records what each device request carried (the real one runs in
// tests/browser/dawn.test.mjs and webgpu.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { adapterReport, ENGINE_DEVICE } from '../../web/lib/loading.js';

/** A navigator.gpu whose adapters have `features`, its WGSL `languageFeatures`; `asked` records requests. */
function fakeGpu(features, languageFeatures) {
  const asked = [];
  class Adapter {
    features = new Set(features);
    info = { vendor: 'v', architecture: 'a', description: 'd' };
    async requestDevice(descriptor = {}) {
      asked.push(descriptor);
      return {};
    }
  }
  const gpu = { wgslLanguageFeatures: new Set(languageFeatures), requestAdapter: async () => new Adapter() };
  return { gpu, asked };
}

test("the engine's device asks for subgroups where the adapter and its WGSL have them", async () => {
  const { gpu, asked } = fakeGpu(['subgroups', 'shader-f16'], ['subgroup_id']);
  const report = await adapterReport(gpu);
  assert.equal(report.subgroups, true);
  assert.equal(report.shaderF16, true);
  const adapter = await gpu.requestAdapter();
  await adapter.requestDevice({ label: ENGINE_DEVICE, requiredFeatures: ['shader-f16'], requiredLimits: { a: 1 } });
  await adapter.requestDevice({ label: 'someone else', requiredFeatures: ['shader-f16'] });
  // A second report wraps nothing twice.
  await adapterReport(gpu);
  await adapter.requestDevice({ label: ENGINE_DEVICE, requiredFeatures: ['subgroups'] });
  assert.deepEqual(asked, [
    { label: ENGINE_DEVICE, requiredFeatures: ['shader-f16', 'subgroups'], requiredLimits: { a: 1 } },
    { label: 'someone else', requiredFeatures: ['shader-f16'] },
    { label: ENGINE_DEVICE, requiredFeatures: ['subgroups'] },
  ]);
});

test('without subgroups, or without subgroup_id in its WGSL, the report says no and requests are left alone', async () => {
  for (const [features, language] of [
    [['shader-f16'], ['subgroup_id']],
    [['subgroups'], []],
  ]) {
    const { gpu, asked } = fakeGpu(features, language);
    assert.equal((await adapterReport(gpu)).subgroups, false, `${features} / ${language}`);
    const adapter = await gpu.requestAdapter();
    await adapter.requestDevice({ label: ENGINE_DEVICE, requiredFeatures: [] });
    assert.deepEqual(asked, [{ label: ENGINE_DEVICE, requiredFeatures: [] }]);
  }
});

test("the page knows the engine's device by the label the engine gives it", () => {
  const rust = readFileSync(new URL('../../crate/engine/src/backend/webgpu/device.rs', import.meta.url), 'utf8');
  assert.match(rust, new RegExp(`const DEVICE_LABEL: &str = "${ENGINE_DEVICE}";`));
});
