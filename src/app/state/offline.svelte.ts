// What a person should know about using the app offline: the service worker
// (scripts/service-worker.ts) has saved the app in this browser (said once, when it first has), a
// new version is ready and waits for a reload, or the browser is offline now. main.ts registers the
// worker through vite-plugin-pwa's registerSW and hands it to `register`; nothing else here knows
// about the plugin, so tests drive this class with a fake.

/** The options of vite-plugin-pwa's registerSW that this class uses. */
export interface RegisterOptions {
  onOfflineReady?: () => void;
  onNeedRefresh?: () => void;
  onRegisteredSW?: (url: string, registration: ServiceWorkerRegistration | undefined) => void;
  onRegisterError?: (error: unknown) => void;
}
/** vite-plugin-pwa's registerSW: registers, returns the function that activates a waiting version and reloads. */
export type RegisterSW = (options: RegisterOptions) => (reloadPage?: boolean) => Promise<void>;

const UPDATE_CHECK_MS = 60 * 60 * 1000; // a tab left open for a day still learns of a new version

export class OfflineState {
  /** The app was just saved for offline use (the first visit's service worker finished installing). */
  ready = $state(false);
  /** A new version is installed and waits for a reload. */
  update = $state(false);
  /** The browser says it has no network. */
  offline = $state(false);
  #activate: ((reloadPage?: boolean) => Promise<void>) | null = null;

  constructor(win: Pick<Window, "addEventListener"> & { navigator: Pick<Navigator, "onLine"> }) {
    this.offline = !win.navigator.onLine;
    win.addEventListener("online", () => (this.offline = false));
    win.addEventListener("offline", () => (this.offline = true));
  }

  /** Registers the service worker; its events set `ready` and `update`. */
  register(registerSW: RegisterSW): void {
    this.#activate = registerSW({
      onOfflineReady: () => (this.ready = true),
      onNeedRefresh: () => (this.update = true),
      onRegisteredSW: (_url, registration) => {
        if (registration)
          setInterval(() => {
            if (!this.offline) void registration.update().catch(() => {});
          }, UPDATE_CHECK_MS);
      },
      // no service worker (an insecure origin, a private window): the app works online as before
      onRegisterError: (e) => console.warn("collapse-lab: no offline copy:", e),
    });
  }

  /** Switches to the waiting version; the page reloads once it has taken over. */
  reload(): void {
    void this.#activate?.(true);
  }

  /** Hides the offline-ready and new-version notices (a new version then waits for the next visit). */
  dismiss(): void {
    this.ready = false;
    this.update = false;
  }
}

/** The tab's one instance (App.svelte shows it, main.ts registers the worker). */
export const offline = new OfflineState(window);
