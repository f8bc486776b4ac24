"""What the API modules of `pykbroker/handlers/` share: the request context, the broker's services
as the handlers see them, the authorization table, config and ACL request helpers, and the
registry of API modules. Nothing here serves an API itself."""
