// Request signing and its building blocks, on the providers' published examples: the AWS
// Signature Version 4 test suite, the worked example of Tencent Cloud's signature v3 document
// and the example of Alibaba Cloud's RPC signature document.
#include <gtest/gtest.h>

#include "refresh/crypto.h"
#include "refresh/signing.h"

namespace cloudfit::refresh {
namespace {

std::string Header(const HttpRequest& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(CryptoTest, KnownDigestsAndEncodings) {
  // FIPS 180-2 / RFC 4231 / RFC 4648 vectors.
  EXPECT_EQ(HexEncode(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HexEncode(HmacSha1("Jefe", "what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(PercentEncode("a b*c~d/e:f"), "a%20b%2Ac~d%2Fe%3Af");
  EXPECT_EQ(PercentEncode("/a b/", true), "/a%20b/");
}

// aws-sig-v4-test-suite: credentials AKIDEXAMPLE, region us-east-1, service "service",
// time 20150830T123600Z, host example.amazonaws.com.
class AwsSigV4Test : public ::testing::Test {
 protected:
  AwsCredentials credentials_{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

  std::string Sign(const std::string& method, const std::string& url) {
    HttpRequest r;
    r.method = method;
    r.url = url;
    SignAwsV4(credentials_, "us-east-1", "service", "20150830T123600Z", &r);
    EXPECT_EQ(Header(r, "X-Amz-Date"), "20150830T123600Z");
    return Header(r, "Authorization");
  }
};

TEST_F(AwsSigV4Test, GetVanilla) {
  EXPECT_EQ(Sign("GET", "https://example.amazonaws.com/"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST_F(AwsSigV4Test, PostVanilla) {
  EXPECT_EQ(Sign("POST", "https://example.amazonaws.com/"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}

TEST_F(AwsSigV4Test, QueryParametersAreSortedByName) {
  EXPECT_EQ(Sign("GET", "https://example.amazonaws.com/?Param2=value2&Param1=value1"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST_F(AwsSigV4Test, SessionTokenIsSentAndSigned) {
  credentials_.session_token = "TOKEN";
  HttpRequest r;
  r.url = "https://example.amazonaws.com/";
  SignAwsV4(credentials_, "us-east-1", "service", "20150830T123600Z", &r);
  EXPECT_EQ(Header(r, "X-Amz-Security-Token"), "TOKEN");
  EXPECT_NE(Header(r, "Authorization").find("SignedHeaders=host;x-amz-date;x-amz-security-token"),
            std::string::npos);
}

// https://www.tencentcloud.com/document/api/213/33224: DescribeInstances in ap-guangzhou at
// X-TC-Timestamp 1551113065 with the document's example key.
TEST(TencentTc3Test, DocumentedExample) {
  HttpRequest r;
  r.url = "https://cvm.tencentcloudapi.com/";
  r.body = R"({"Limit": 1, "Filters": [{"Values": ["\u672a\u547d\u540d"], "Name": "instance-name"}]})";
  TencentCredentials credentials{"AKID**********************0123456789EXAMPLE",
                                 "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE", ""};
  SignTencentTc3(credentials, "cvm", "DescribeInstances", "2017-03-12", "ap-guangzhou",
                 1551113065, &r);
  EXPECT_EQ(Header(r, "Authorization"),
            "TC3-HMAC-SHA256 Credential=AKID**********************0123456789EXAMPLE/2019-02-25/"
            "cvm/tc3_request, SignedHeaders=content-type;host, "
            "Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168");
  EXPECT_EQ(Header(r, "X-TC-Timestamp"), "1551113065");
  EXPECT_EQ(Header(r, "X-TC-Action"), "DescribeInstances");
  EXPECT_EQ(Header(r, "Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(r.method, "POST");
}

TEST(TencentTc3Test, TheCredentialDateIsTheUtcDate) {
  // 1551139199 is 2019-02-25 23:59:59 UTC (2019-02-26 in UTC+8): the scope keeps the UTC day.
  HttpRequest r;
  r.url = "https://cvm.tencentcloudapi.com/";
  SignTencentTc3({"id", "key", ""}, "cvm", "A", "2017-03-12", "ap-guangzhou", 1551139199, &r);
  EXPECT_NE(Header(r, "Authorization").find("/2019-02-25/cvm/tc3_request"), std::string::npos);
}

// https://www.alibabacloud.com/help/en/sdk/product-overview/rpc-mechanism: DescribeRegions
// signed with AccessKeySecret "testsecret".
TEST(AlibabaRpcSignatureTest, DocumentedExample) {
  std::map<std::string, std::string> params = {
      {"Timestamp", "2016-02-23T12:46:24Z"},
      {"Format", "XML"},
      {"AccessKeyId", "testid"},
      {"Action", "DescribeRegions"},
      {"SignatureMethod", "HMAC-SHA1"},
      {"SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"},
      {"Version", "2014-05-26"},
      {"SignatureVersion", "1.0"}};
  EXPECT_EQ(AlibabaRpcSignature("GET", params, "testsecret"), "OLeaidS1JvxuMvnyHOwuJ+uX5qY=");
  EXPECT_EQ(CanonicalQuery(params),
            "AccessKeyId=testid&Action=DescribeRegions&Format=XML&SignatureMethod=HMAC-SHA1&"
            "SignatureNonce=3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf&SignatureVersion=1.0&"
            "Timestamp=2016-02-23T12%3A46%3A24Z&Version=2014-05-26");
  params["Action"] = "DescribeZones";
  EXPECT_NE(AlibabaRpcSignature("GET", params, "testsecret"), "OLeaidS1JvxuMvnyHOwuJ+uX5qY=");
}

}  // namespace
}  // namespace cloudfit::refresh
