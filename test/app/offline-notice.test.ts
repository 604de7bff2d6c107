// What the app says about working offline (state/offline.svelte.ts, OfflineNotice, OfflineBadge):
// driven by a fake of vite-plugin-pwa's registerSW and fake online/offline events, as the built
// app's service worker would (test/e2e/offline.test.ts has the real one).
import { describe, expect, it, vi } from "vitest";
import { flushSync } from "svelte";
import { fireEvent, render, screen } from "@testing-library/svelte";
import OfflineNotice from "../../src/app/components/OfflineNotice.svelte";
import OfflineBadge from "../../src/app/components/OfflineBadge.svelte";
import { OfflineState, type RegisterOptions } from "../../src/app/state/offline.svelte";

/** A window whose online state the test sets, and a registerSW whose events the test fires. */
function setup(onLine = true) {
  const win = Object.assign(new EventTarget(), { navigator: { onLine } });
  const state = new OfflineState(win);
  let events: RegisterOptions = {};
  const activate = vi.fn(async () => {});
  state.register((options) => ((events = options), activate));
  return { win, state, events: () => events, activate };
}

describe("the offline notice", () => {
  it("says once that the app is saved for offline use, and goes when dismissed", async () => {
    const { state, events } = setup();
    render(OfflineNotice, { offline: state });
    expect(screen.queryByRole("status")).toBeNull();
    events().onOfflineReady!();
    flushSync();
    expect(screen.getByTestId("offline-ready").textContent).toContain("Saved for offline use");
    await fireEvent.click(screen.getByRole("button", { name: "OK" }));
    expect(screen.queryByRole("status")).toBeNull();
  });

  it("offers a new version: Reload activates it, Later keeps the page as it is", async () => {
    const { state, events, activate } = setup();
    render(OfflineNotice, { offline: state });
    events().onNeedRefresh!();
    flushSync();
    expect(screen.getByTestId("offline-update").textContent).toContain("A new version");
    await fireEvent.click(screen.getByRole("button", { name: "Reload" }));
    expect(activate).toHaveBeenCalledWith(true);
    await fireEvent.click(screen.getByRole("button", { name: "Later" }));
    expect(screen.queryByRole("status")).toBeNull();
  });

  it("says when the browser is offline, and stops when it is back", () => {
    const { win, state } = setup(false);
    render(OfflineBadge, { offline: state });
    expect(screen.getByTestId("offline-now").textContent).toBe("offline");
    win.dispatchEvent(new Event("online"));
    flushSync();
    expect(screen.queryByTestId("offline-now")).toBeNull();
    win.dispatchEvent(new Event("offline"));
    flushSync();
    expect(screen.getByTestId("offline-now")).toBeTruthy();
  });
});
