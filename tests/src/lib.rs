//! System test helpers.
