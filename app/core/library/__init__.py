"""The library's store: files, LanceDB tables, object storage, leases."""
