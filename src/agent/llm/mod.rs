//! OpenAI-compatible chat client.
