//! Examples of using the framework.
