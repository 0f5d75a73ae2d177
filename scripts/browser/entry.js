// The official JS client as one file for the test page (bundled by scripts/browser.sh).
import { Client } from "@langchain/langgraph-sdk";
window.LangGraphClient = Client;
