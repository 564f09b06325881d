//! Where a model's files are: a directory, or a model id in the local
//! Hugging Face cache at a revision, looked up as huggingface_hub looks it
//! up offline (vLLM never reaches the Hub here either): `refs/<revision>`
//! names the snapshot's commit, or the revision is a commit itself.

use std::path::{Path, PathBuf};

/// A model id the cache does not hold (at that revision).
#[derive(Debug, thiserror::Error)]
#[error(
    "model `{id}` is not a directory and is not in the local Hugging Face cache{} (looked in {looked})",
    revision.as_ref().map(|r| format!(" at revision `{r}`")).unwrap_or_default()
)]
pub struct NotFound {
    pub id: String,
    pub revision: Option<String>,
    pub looked: String,
}

/// What the server was asked to load (`MODEL`, `--revision`, `--tokenizer`,
/// `--tokenizer-revision`).
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub model: String,
    pub revision: Option<String>,
    pub tokenizer: Option<String>,
    pub tokenizer_revision: Option<String>,
}

impl Source {
    /// A model and its own tokenizer, at the cache's `main`.
    pub fn model(spec: &str) -> Source {
        Source { model: spec.to_string(), ..Default::default() }
    }

    /// The model directory and the tokenizer directory, as vLLM finds them
    /// offline (`EngineArgs` turns each id into its cached snapshot before
    /// anything else): the model at `--revision`, a named tokenizer at
    /// `--tokenizer-revision` (`main` by default), else the model's own
    /// snapshot, whatever `--tokenizer-revision` says.
    pub fn resolve(&self) -> Result<(PathBuf, PathBuf), NotFound> {
        let model = resolve(&self.model, self.revision.as_deref())?;
        let tokenizer = match &self.tokenizer {
            None => model.clone(),
            Some(spec) => resolve(spec, self.tokenizer_revision.as_deref())?,
        };
        Ok((model, tokenizer))
    }
}

/// A directory as it is (a revision means nothing for it, as in vLLM), or
/// model id `org/name`'s cached snapshot of `revision` (default `main`).
pub fn resolve(spec: &str, revision: Option<&str>) -> Result<PathBuf, NotFound> {
    let direct = PathBuf::from(spec);
    if direct.is_dir() {
        return Ok(direct);
    }
    let wanted = revision.unwrap_or("main");
    let mut looked = Vec::new();
    for cache in hub_caches() {
        let repo = cache.join(format!("models--{}", spec.replace('/', "--")));
        looked.push(repo.display().to_string());
        if let Some(snapshot) = snapshot(&repo, wanted) {
            return Ok(snapshot);
        }
    }
    Err(NotFound {
        id: spec.to_string(),
        revision: revision.map(str::to_string),
        looked: format!("{} (as a path) and {}", spec, looked.join(", ")),
    })
}

/// `refs/<revision>`'s commit, else the revision read as a commit: its
/// snapshot directory when the cache holds it.
fn snapshot(repo: &Path, revision: &str) -> Option<PathBuf> {
    // A revision is a ref name or a commit, never a path out of the repo.
    if revision.is_empty() || revision.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
        return None;
    }
    let commit = std::fs::read_to_string(repo.join("refs").join(revision))
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|_| revision.to_string());
    if commit.contains('/') {
        return None;
    }
    let dir = repo.join("snapshots").join(commit);
    dir.is_dir().then_some(dir)
}

/// `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`
/// (`--download-dir` sets `HF_HUB_CACHE`).
fn hub_caches() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = env("HF_HUB_CACHE").or_else(|| env("HUGGINGFACE_HUB_CACHE")) {
        return vec![p];
    }
    if let Some(home) = env("HF_HOME") {
        return vec![home.join("hub")];
    }
    let base = env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")));
    base.map(|b| vec![b.join("huggingface").join("hub")]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(root: &Path) -> PathBuf {
        let repo = root.join("models--org--m");
        for commit in ["aaaa", "bbbb"] {
            std::fs::create_dir_all(repo.join("snapshots").join(commit)).expect("snapshot");
        }
        std::fs::create_dir_all(repo.join("refs").join("pr")).expect("refs");
        std::fs::write(repo.join("refs").join("main"), "aaaa\n").expect("main");
        std::fs::write(repo.join("refs").join("pr").join("1"), "bbbb").expect("pr");
        repo
    }

    #[test]
    fn a_revision_is_a_ref_or_a_commit_and_nothing_else() {
        let root = std::env::temp_dir().join(format!("derender-hub-{}", std::process::id()));
        let repo = repo(&root);
        let at = |rev: &str| snapshot(&repo, rev).map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        assert_eq!(at("main"), Some(Some("aaaa".into())));
        assert_eq!(at("pr/1"), Some(Some("bbbb".into())));
        assert_eq!(at("bbbb"), Some(Some("bbbb".into())));
        assert_eq!(at("v2"), None);
        assert_eq!(at("../snapshots/aaaa"), None);
        assert_eq!(at(""), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
