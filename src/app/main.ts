/// <reference types="vite-plugin-pwa/vanillajs" />
import { mount } from "svelte";
import { registerSW } from "virtual:pwa-register";
import App from "./App.svelte";
import { offline } from "./state/offline.svelte";
import "./app.css";

mount(App, { target: document.getElementById("app")! });
offline.register(registerSW); // the service worker of the built app (a no-op under `npm start`)
