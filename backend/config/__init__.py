"""The console's configuration, shared by the launcher and the pages (no streamlit):

* :mod:`.launch` - what the launcher hands the console process (target, read-only, storage,
  API key variable, allowlist, Ray address: the launch policy) and the sign-in settings;
* :mod:`.saved_connections` - saved connections (TOML without secrets) and their secrets;
* :mod:`.targets` - which targets a console may open (the allowlist, ad-hoc targets' role);
* :mod:`.auth_settings` - the check of secrets.toml's ``[auth]``.
"""
