"""`ssl.principal.mapping.rules` as Kafka's SslPrincipalMapper (its unit test cases), and the DN
as Java's X500Principal.getName() prints it."""
from __future__ import annotations

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from pykbroker.security.ssl_principal import NoMatchingRule, SslPrincipalMapper, rfc2253_name


@pytest.mark.parametrize("rules", [
    "DEFAULT",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
    "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
    "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
    "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
])
def test_valid_rules(rules):
    SslPrincipalMapper.from_rules(rules)


@pytest.mark.parametrize("rules", [
    "DEFAULT/L", "DEFAULT/U", "RULE:CN=(.*?),OU=ServiceUsers.*/$1", "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U", "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/U", "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
])
def test_invalid_rules(rules):
    with pytest.raises(ValueError, match="Invalid rule"):
        SslPrincipalMapper.from_rules(rules)


def test_rules_apply_in_order_with_case_changes():
    mapper = SslPrincipalMapper.from_rules(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U,"
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,"
        "DEFAULT")
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "Duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("cn=duke,ou=JavaSoft,dc=example,dc=com") == "DUKE@JAVASOFT"
    assert mapper.name("cn=duke,ou=javasoft,o=example,c=us") == "DUKE"
    assert mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"


def test_no_matching_rule_fails():
    mapper = SslPrincipalMapper.from_rules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/")
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=bob,OU=ops"):
        mapper.name("CN=bob,OU=ops")


def test_commas_in_rules_and_escaped_slashes():
    mapper = SslPrincipalMapper.from_rules("RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/,RULE:^CN=(.*?)\\/x$/$1/")
    assert mapper.name("CN=kim\\, Adam,OU=ITZ,DC=geodis,DC=cz") == "kim\\"
    with pytest.raises(NoMatchingRule):  # T is excluded by the character class
        mapper.name("CN=Tkac,OU=ITZ")
    assert mapper.name("CN=T/x") == "T"


def test_back_references_beyond_the_groups_are_literal():
    mapper = SslPrincipalMapper.from_rules("RULE:^CN=(.*?),OU=(.*?)$/$1@$2$3/")
    assert mapper.name("CN=alice,OU=eng") == "alice@eng$3"


def _name(*rdns):
    return x509.Name([x509.RelativeDistinguishedName([x509.NameAttribute(oid, value)]) for oid, value in rdns])


def test_dn_is_most_specific_first_with_rfc2253_keywords():
    name = _name((NameOID.COUNTRY_NAME, "US"), (NameOID.STATE_OR_PROVINCE_NAME, "CA"),
                 (NameOID.LOCALITY_NAME, "SF"), (NameOID.ORGANIZATION_NAME, "example"),
                 (NameOID.ORGANIZATIONAL_UNIT_NAME, "eng"), (NameOID.COMMON_NAME, "alice"))
    assert rfc2253_name(name) == "CN=alice,OU=eng,O=example,L=SF,ST=CA,C=US"


def test_dn_escapes_as_java_does():
    name = _name((NameOID.ORGANIZATION_NAME, "a+b"), (NameOID.COMMON_NAME, " Smith, J=x#1 "))
    assert rfc2253_name(name) == "CN=\\ Smith\\, J\\=x\\#1\\ ,O=a\\+b"


def test_attributes_without_an_rfc2253_keyword_are_hex_encoded():
    name = _name((NameOID.COMMON_NAME, "alice"), (NameOID.EMAIL_ADDRESS, "a@b.c"))
    assert rfc2253_name(name) == "1.2.840.113549.1.9.1=#1605614062 2e63".replace(" ", "") + ",CN=alice"
