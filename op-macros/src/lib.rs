//! Proc macros of the op framework.
