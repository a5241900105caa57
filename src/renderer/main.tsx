import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { resolveApi, resolvePathForFile } from './api';
import { App } from './App';
import { StoreProvider } from './context';
import { createAppStore } from './store';
import './styles.css';

const store = createAppStore(resolveApi(), { pathForFile: resolvePathForFile() });
const root = document.getElementById('root');
if (!root) throw new Error('#root missing from index.html');
createRoot(root).render(
  <StrictMode>
    <StoreProvider store={store}>
      <App />
    </StoreProvider>
  </StrictMode>,
);
